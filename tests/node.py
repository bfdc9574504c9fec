"""Node.js for the TypeScript client's tests: where it is, and a skip where it is too old."""

from __future__ import annotations

import shutil
import subprocess

import pytest

NODE = shutil.which("node")


def node_major() -> int:
    """Node's major version, 0 where there is none."""
    if NODE is None:
        return 0
    out = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().lstrip("v").split(".")[0])


needs_node = pytest.mark.skipif(
    NODE is None or node_major() < 20, reason="needs Node.js 20 or newer"
)
