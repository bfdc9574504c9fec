"""Issue 49: frictions a new user hit on the command line, each as that user met it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EMB = ["--embedder", "hashing:64"]
LATIN1 = '[{"speaker": "Ann", "text": "café"}]'.encode("latin-1")


def _cli(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`hymem ARGS` in a fresh interpreter: what a user's shell runs."""
    code = "import sys; from hymem.cli import main; sys.argv = ['hymem', *sys.argv[1:]]; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        timeout=120,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("hymem: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- 1: a file that is not UTF-8 -----------------------------------------------------------


def test_add_refuses_a_latin1_file_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "latin1.json"
    source.write_bytes(LATIN1)
    done = _cli("add", str(source), "-u", "x", "-s", str(tmp_path / "m"), *EMB)
    line = _one_error_line(done)
    assert f"{source}: not UTF-8 (byte 32" in line


def test_add_refuses_latin1_on_stdin_instead_of_storing_a_replacement(tmp_path: Path) -> None:
    done = _cli("add", "-u", "x", "-s", str(tmp_path / "m"), *EMB, stdin=LATIN1)
    assert "stdin: not UTF-8" in _one_error_line(done)
    assert not (tmp_path / "m").exists()  # refused before any memory was opened
