"""Each peer in a virtual environment of its own, so nothing of a peer becomes a hymem
dependency: built on demand under `--venvs DIR` from the pinned `requirements-<peer>.txt`
beside this file, torch first (pip then keeps the local CPU build instead of resolving a
CUDA one), and reused while the requirements file is unchanged (its hash is stamped in the
venv; a changed file is installed over the existing venv). hymem's own worker runs in the
driver's interpreter."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from rich.console import Console

HERE = Path(__file__).resolve().parent
PEERS = ("mem0", "chroma", "lancedb")
STAMP = ".peers-requirements.sha256"


def requirements(peer: str) -> Path:
    return HERE / f"requirements-{peer}.txt"


def torch_pin(path: Path) -> str | None:
    """The requirements file's `torch==...` line, if any."""
    for line in path.read_text().splitlines():
        if line.strip().startswith("torch=="):
            return line.strip()
    return None


def peer_python(peer: str, root: Path, console: Console, *, build: bool = True) -> Path:
    """The interpreter of `peer`'s venv under `root`, built (or rebuilt) when missing or when
    its requirements changed. hymem's is the running interpreter."""
    if peer == "hymem":
        return Path(sys.executable)
    venv = root / peer
    python = venv / "bin" / "python"
    req = requirements(peer)
    digest = hashlib.sha256(req.read_bytes()).hexdigest()
    stamp = venv / STAMP
    if python.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return python
    if not build:
        raise FileNotFoundError(f"no up-to-date venv for {peer} under {root}")
    console.print(f"[bold]installing the {peer} venv[/] in {venv} (minutes the first time)")
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    if pin := torch_pin(req):
        subprocess.run([*pip, pin], check=True)
    subprocess.run([*pip, "-r", str(req)], check=True)
    stamp.write_text(digest)
    return python


def existing_python(peer: str, root: Path) -> Path | None:
    """The peer's interpreter if its venv is already built and current (tests use this: the
    suite never builds a venv)."""
    try:
        return peer_python(peer, root, Console(quiet=True), build=False)
    except FileNotFoundError:
        return None
