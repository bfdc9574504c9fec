#!/usr/bin/env python3
"""Type-check hymem (engine/, indexes/, prompts/) with mypy and the repo's [tool.mypy] config.

mypy cannot follow setuptools' package-dir mapping (`hymem` -> engine/, `hymem.indexes` ->
indexes/, `hymem.prompts` -> prompts/), so this builds that package as a tree of symlinks in a
temporary directory and runs `mypy -p hymem` there. Reports name the repo's files (engine/...,
indexes/...), not the symlinks. The cache stays in the repo's (ignored) .mypy_cache, so a rerun
only rechecks what changed.

    python scripts/typecheck.py [extra mypy arguments]

Exits with mypy's status: 0 when clean.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Shim path prefix -> repo path prefix; the longest prefixes first.
_PREFIXES = (("hymem/indexes/", "indexes/"), ("hymem/prompts/", "prompts/"), ("hymem/", "engine/"))
_LOCATION = re.compile(r"^(hymem/[^:\s]+)", re.MULTILINE)


def build_shim(dest: Path) -> Path:
    """Lay out `dest/hymem` as symlinks onto the repo's sources; returns `dest`."""
    pkg = dest / "hymem"
    pkg.mkdir(parents=True)
    for entry in sorted((ROOT / "engine").iterdir()):
        if entry.name == "__pycache__":
            continue
        (pkg / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (pkg / "indexes").symlink_to(ROOT / "indexes", target_is_directory=True)
    (pkg / "prompts").symlink_to(ROOT / "prompts", target_is_directory=True)
    return dest


def _repo_path(match: re.Match[str]) -> str:
    path = match.group(1)
    for shim, repo in _PREFIXES:
        if path.startswith(shim):
            return repo + path[len(shim) :]
    return path


def run(extra: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run mypy over the shim; stdout names repo files."""
    with tempfile.TemporaryDirectory(prefix="hymem-typecheck-") as tmp:
        build_shim(Path(tmp))
        cmd = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "-p",
            "hymem",
            *(extra or []),
        ]
        # MYPYPATH would put another `hymem` ahead of the shim; the shim is the cwd.
        env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
        res = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, env=env)
    res.stdout = _LOCATION.sub(_repo_path, res.stdout)
    return res


def main() -> int:
    res = run(sys.argv[1:])
    sys.stdout.write(res.stdout)
    sys.stderr.write(res.stderr)
    return res.returncode


if __name__ == "__main__":
    sys.exit(main())
