"""A passing run under xdist ends without a KeyboardInterrupt warning (issue 49, friction 18):
a finaliser slower than execnet's 5-second exit grace, left for pytest's clean-up, was
interrupted by execnet's SIGINT; `tests/worker_finish.py` collects it before the worker reports
finished. The same session without that plugin shows the warning, so the check is live."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tests.conftest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SLOW_CYCLE = """
import gc, time

SECONDS = {seconds}

class Slow:
    def __del__(self):
        time.sleep(SECONDS)  # longer than execnet's 5 s exit grace

def test_leaves_a_slow_cycle():
    gc.disable()  # left for the session's end, as garbage a test made late is
    a = Slow()
    a.me = a
"""


def _session(folder: Path, seconds: int, *plugins: str) -> subprocess.Popen[str]:
    folder.mkdir()
    test = SLOW_CYCLE.format(seconds=seconds)
    (folder / "test_slow_cycle.py").write_text(test, encoding="utf-8")
    args = [sys.executable, "-m", "pytest", "-q", "-n", "1", "-p", "no:cacheprovider"]
    for plugin in plugins:
        args += ["-p", plugin]
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_ADDOPTS": ""}
    return subprocess.Popen(
        [*args, "test_slow_cycle.py"],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_a_slow_finaliser_ends_before_the_worker_reports_finished(tmp_path: Path) -> None:
    assert "tests.worker_finish" in tests.conftest.pytest_plugins
    # With the plugin the finaliser runs before the report, so its length cannot matter. Without
    # it, 20 s outlasts the grace however late a loaded controller sends the exit (the
    # interrupt cuts the sleep short then).
    fixed = _session(tmp_path / "fixed", 7, "tests.worker_finish")
    bare = _session(tmp_path / "bare", 20)
    fixed_out, _ = fixed.communicate(timeout=120)
    bare_out, _ = bare.communicate(timeout=120)
    assert fixed.returncode == 0, fixed_out
    assert "KeyboardInterrupt" not in fixed_out and "Unraisable" not in fixed_out, fixed_out
    # Without the plugin, the same session shows what friction 18 reported.
    assert "PytestUnraisableExceptionWarning" in bare_out and "KeyboardInterrupt" in bare_out, (
        bare_out
    )
