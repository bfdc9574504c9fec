"""A built wheel carries every module under the one `hymem` namespace, prompts included, and the
`py.typed` marker that tells users' type checkers hymem is typed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the sources: an in-place build reuses ./build, whose stale modules
    (from before a file moved) would land in the wheel and hide a broken import."""
    out = tmp_path_factory.mktemp("dist")
    src = tmp_path_factory.mktemp("src") / "hymem"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "runs", "memdata", "*.egg-info", "__pycache__"
        ),
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        check=True,
    )
    wheels = list(out.glob("hymem-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def _source_modules() -> list[str]:
    mapping = {"engine": "hymem", "indexes": "hymem.indexes", "prompts": "hymem.prompts"}
    mods = []
    for folder, package in mapping.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            if rel.name == "__main__":
                continue  # importing it would run the CLI
            parts = [p for p in rel.parts if p != "__init__"]
            if folder == "engine" and parts and parts[0] in ("indexes", "prompts"):
                continue
            mods.append(".".join([package, *parts]))
    return mods


@pytest.mark.integration
@pytest.mark.slow
def test_wheel_contains_and_imports_every_module(wheel: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(tmp_path / "site")
    assert any(n.startswith("hymem/prompts/") and n.endswith(".md") for n in names), names
    assert "hymem/py.typed" in names, names
    assert not any(n.startswith(("engine/", "indexes/", "prompts/")) for n in names)
    modules = _source_modules()
    assert "hymem.indexes.store.store" in modules
    script = (
        "import importlib, sys\n"
        f"mods = {modules!r}\n"
        "for m in mods:\n"
        "    mod = importlib.import_module(m)\n"
        f"    assert mod.__file__.startswith({str(tmp_path / 'site')!r}), (m, mod.__file__)\n"
        "print(len(mods))\n"
    )
    env = {"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    res = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert int(res.stdout.strip()) == len(modules)


@pytest.mark.integration
def test_cli_help_runs() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "hymem.cli", "--help"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    for command in ("ask", "search", "sleep", "eval", "dashboard", "reindex", "stats"):
        assert command in res.stdout
