"""mypy is part of the test run: engine/, indexes/ and prompts/ type-check clean, so CI fails on a
type error the same way it fails on a bug. The check itself is scripts/typecheck.py (the
configuration is pyproject.toml's [tool.mypy]); a warm cache makes a rerun take seconds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
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
