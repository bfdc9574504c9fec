"""mypy is part of the test run: engine/, indexes/ and prompts/ type-check clean under --strict,
so CI fails on a type error the same way it fails on a bug. The check itself is
scripts/typecheck.py (the configuration is pyproject.toml's [tool.mypy]); a warm cache makes a
rerun take seconds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_mypy_clean() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "typecheck.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_check_is_strict() -> None:
    """hymem ships py.typed: users' checkers read its annotations, so they are held to --strict."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True
    relaxed = [
        override["module"]
        for override in config.get("overrides", [])
        if set(override) - {"module", "ignore_missing_imports"}
    ]
    assert relaxed == [], "per-module relaxations of --strict"


def test_every_type_ignore_says_why() -> None:
    """An ignore hides a checked error: the line must say why it is safe."""
    bare = []
    for folder in ("engine", "indexes", "prompts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                _, found, rest = line.partition("# type: ignore")
                if found and not rest.partition("]")[2].strip(" #"):
                    bare.append(f"{path.relative_to(ROOT)}:{n}")
    assert bare == [], "type: ignore without a reason on its line: " + ", ".join(bare)
