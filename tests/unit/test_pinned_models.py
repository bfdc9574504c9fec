"""The benchmark-only model assembler: parts found on disk, the whole file pinned, never partial."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from hymem.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "pinned_models", ROOT / "benchmarks" / "pinned_models.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Two installed-looking packages holding a file in two parts (never imported)."""
    site = tmp_path / "site"
    for i, chunk in enumerate((b"GGUF-first-half|", b"second-half"), start=1):
        pkg = site / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        # An import would fail loudly: the assembler must find the files without importing.
        (pkg / "__init__.py").write_text("raise RuntimeError('imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return [(f"fake_model_part{i}", f"data/part{i:02d}.bin") for i in (1, 2)]


def _model(module: ModuleType, parts: list[tuple[str, str]], sha256: str) -> object:
    pinned = replace(module.QWEN_CODER_05B.pinned, sha256=sha256, filename="m.gguf")
    return module.SplitModel(parts=tuple(parts), pinned=pinned, source="test")


def test_parts_are_joined_in_order_and_pinned(
    parts: list[tuple[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _load()
    whole = b"GGUF-first-half|second-half"
    model = _model(module, parts, hashlib.sha256(whole).hexdigest())
    checked: list[Path] = []
    monkeypatch.setattr(module, "check_metadata", lambda _m, path: checked.append(path) or "m")
    path = module.assemble(model, tmp_path / "out")
    assert path.read_bytes() == whole
    assert checked == [path]
    assert not any(sys.modules.get(name) for name, _ in parts)


def test_a_wrong_file_is_refused_and_leaves_nothing(
    parts: list[tuple[str, str]], tmp_path: Path
) -> None:
    module = _load()
    model = _model(module, parts, "0" * 64)
    with pytest.raises(ConfigError, match="pinned"):
        module.assemble(model, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_missing_part_names_the_install_command(tmp_path: Path) -> None:
    module = _load()
    model = _model(module, [("no_such_model_part", "data/part01.bin")], "0" * 64)
    with pytest.raises(ConfigError, match=r"requirements-models\.txt"):
        module.assemble(model, tmp_path / "out")
