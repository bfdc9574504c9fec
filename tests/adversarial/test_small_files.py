"""Garbage in the store's small JSON files is repaired from LanceDB, never fatal.

`lexical_sync.json` only says whether Tantivy is in step: garbage means "not known to be", so a
writer rebuilds and a reader searches without the lexical index. `meta.json` is mirrored in the
`meta` table: a writer restores the file from it, a reader reads the copy without writing; a
deleted `meta.json` opens the same way for both. Only when no copy survives is it a typed
`StoreCorruptedError`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hymem import EmbedderMismatchError, Memory, MemoryConfig, StoreCorruptedError, StoreError
from hymem.cli import app
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.lance.schema import SCHEMA_VERSION
from hymem.indexes.protocol import RowScope
from typer.testing import CliRunner

from tests.fixtures_store import DIM, commit_texts, open_store
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

GARBAGE = b"\x00{not json at all"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    emb = HashingEmbedder(DIM)
    with open_store(tmp_path / "m", emb) as store:
        commit_texts(store, emb, "alice", ["Alice adopted a cat", "Alice sings"], segment_id="a1")
    return tmp_path / "m"


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of the store but LanceDB's own (a reader must change none of them)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "lance" not in p.relative_to(folder).parts
    }


# --- lexical_sync.json ------------------------------------------------------------------------
def test_garbage_sync_record_makes_the_writer_rebuild(folder: Path) -> None:
    (folder / "lexical_sync.json").write_bytes(GARBAGE)
    with capture_events() as events:
        store = open_store(folder, HashingEmbedder(DIM))
    with store:
        assert [i for i, _ in store.lexical_search(RowScope("alice"), "cat", 5)] == ["a1-s0"]
    rebuilt = [e for e in events if e["event"] == "store.lexical_rebuild"]
    assert rebuilt and "lexical_sync.json" in rebuilt[0]["reason"]
    assert json.loads((folder / "lexical_sync.json").read_text())["segments"] >= 1


def test_garbage_sync_record_makes_a_reader_search_without_lexical(folder: Path) -> None:
    (folder / "lexical_sync.json").write_bytes(GARBAGE)
    before = _snapshot(folder)
    with capture_events() as events:
        reader = open_store(folder, HashingEmbedder(DIM), read_only=True)
    with reader:
        assert reader.lexical_unavailable
        assert reader.lexical_search(RowScope("alice"), "cat", 5) == []
        assert reader.dense_search(RowScope("alice"), HashingEmbedder(DIM).embed(["cat"])[0], 1)
    assert [e for e in events if e["event"] == "store.lexical_unavailable"]
    assert _snapshot(folder) == before


# --- meta.json --------------------------------------------------------------------------------
def test_garbage_meta_json_is_restored_by_the_writer(folder: Path) -> None:
    (folder / "meta.json").write_bytes(GARBAGE)
    with pytest.raises(EmbedderMismatchError):  # the table's copy is checked like the file
        open_store(folder, HashingEmbedder(32))
    with capture_events() as events:
        store = open_store(folder, HashingEmbedder(DIM))
    with store:
        assert store.meta()["dim"] == DIM and store.meta()["schema_version"] == SCHEMA_VERSION
        assert store.counts("alice")["summaries"] == 2
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["embedder"] == f"hashing-{DIM}" and meta["dim"] == DIM
    assert any(e["event"] == "store.meta_restored" for e in events)


@pytest.mark.parametrize("damage", ["garbage", "deleted"])
def test_reader_opens_from_the_meta_table_without_writing(folder: Path, damage: str) -> None:
    if damage == "garbage":
        (folder / "meta.json").write_bytes(GARBAGE)
    else:
        (folder / "meta.json").unlink()
    before = _snapshot(folder)
    with pytest.raises(EmbedderMismatchError):
        open_store(folder, HashingEmbedder(32), read_only=True)
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as reader:
        assert reader.meta()["embedder"] == f"hashing-{DIM}" and reader.meta()["dim"] == DIM
        assert [i for i, _ in reader.lexical_search(RowScope("alice"), "cat", 5)] == ["a1-s0"]
    assert _snapshot(folder) == before
    # the writer agrees, and puts the file back
    with open_store(folder, HashingEmbedder(DIM)) as store:
        assert store.meta()["dim"] == DIM
    assert json.loads((folder / "meta.json").read_text())["dim"] == DIM


def test_stats_command_reads_a_store_with_garbage_meta_json(folder: Path) -> None:
    (folder / "meta.json").write_bytes(GARBAGE)
    args = ["stats", "-s", str(folder), "--json", "--embedder", f"hashing:{DIM}"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    stats = json.loads([ln for ln in res.output.splitlines() if ln.startswith("{")][-1])
    assert stats["meta"]["embedder"] == f"hashing-{DIM}" and stats["counts"]["summaries"] == 2


@pytest.mark.parametrize("read_only", [False, True])
def test_garbage_meta_json_without_a_table_copy_is_a_typed_error(
    folder: Path, read_only: bool
) -> None:
    (folder / "meta.json").write_bytes(GARBAGE)
    shutil.rmtree(folder / "lance" / "meta.lance")
    with pytest.raises(StoreCorruptedError, match=r"meta\.json"):
        open_store(folder, HashingEmbedder(DIM), read_only=read_only)
    assert (folder / "meta.json").read_bytes() == GARBAGE  # nothing was guessed or overwritten


def test_read_only_open_of_a_folder_that_is_no_store(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="no hymem memory"):
        open_store(tmp_path / "empty", HashingEmbedder(DIM), read_only=True)
    assert list((tmp_path / "empty").iterdir()) == []


def test_memory_facade_opens_with_garbage_meta_json(folder: Path) -> None:
    (folder / "meta.json").write_bytes(GARBAGE)
    config = MemoryConfig.defaults(embedder=f"hashing:{DIM}")
    with Memory(folder, config=config, read_only=True) as mem:
        assert [h.id for h in mem.search("cat", user_id="alice", k=1)] == ["a1-s0"]
    with Memory(folder, config=config) as mem:
        assert mem.stats(user_id="alice")["summaries"] == 2
