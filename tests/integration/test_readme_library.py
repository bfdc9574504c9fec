"""Issue #28 (8): every code block of the README's "Library use" section runs as written, in
order, in one namespace, on the embedded defaults (extractive backend, the real MiniLM
embedder) in a fresh folder. The served block's `URL` and `KEY` name a real server on
127.0.0.1 (the only names the README leaves to the reader)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_serve import Served, hashing_memory

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"


def library_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Library use\n")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_the_library_section_has_the_blocks_it_promises() -> None:
    blocks = library_blocks()
    assert len(blocks) >= 5
    assert any("Memory(" in b and "ask(" in b for b in blocks)


def test_every_library_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    served = Served(hashing_memory(tmp_path / "served"))
    namespace: dict[str, Any] = {"URL": served.url, "KEY": "ka", "__name__": "__readme__"}
    try:
        for i, block in enumerate(library_blocks()):
            code = compile(block, f"README.md library block {i + 1}", "exec")
            exec(code, namespace)  # running the README is the test
    finally:
        mem = namespace.get("mem")
        if mem is not None and hasattr(mem, "close"):
            mem.close()
        served.stop()
    assert (tmp_path / "memdata").is_dir() and (tmp_path / "alice.jsonl").is_file()
