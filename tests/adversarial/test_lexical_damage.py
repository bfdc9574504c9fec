"""A damaged Tantivy index never makes a store unopenable: it is derived from LanceDB.

Five kinds of damage (the folder deleted or replaced by a file, a segment file truncated or
deleted, garbage in its meta.json). A writer rebuilds the index on open and finds what it found
before; a reader opens, searches dense only and flags the hits, warning once; `hymem reindex`
rebuilds from scratch. Damage done while a store is open never crashes the next search."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app
from hymem.core.types import Level
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store
from hymem.testing import store_of
from typer.testing import CliRunner

from tests.fixtures_store import DIM, commit_texts, open_store
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

EMBEDDER = f"hashing:{DIM}"
# "segment_truncated" once killed a CI run with SIGBUS: Tantivy's reload thread re-read a closed
# store's segments from their memory maps as the test truncated one. Indexes now reload only
# inside hymem's calls (see test_lexical_truncated_while_open.py for truncation under a live one).
DAMAGE = ["folder_deleted", "segment_truncated", "meta_garbage", "segment_deleted", "now_a_file"]
QUERIES = [
    ("alice", "cat", Level.SUMMARY),
    ("alice", "choir", Level.SUMMARY),
    ("alice", "cat choir", Level.SEGMENT),
    ("bob", "bicycles", Level.SUMMARY),
]
# What the lexical index reported about itself: the events a damaged open may log.
LEXICAL_WARNINGS = {"store.lexical_rebuild", "store.lexical_unavailable", "lexical.unavailable"}


def damage(folder: Path, kind: str) -> None:
    tantivy = folder / "tantivy"
    segment = sorted(tantivy.glob("*.idx"))[0]
    if kind == "folder_deleted":
        shutil.rmtree(tantivy)
    elif kind == "segment_truncated":
        segment.write_bytes(b"")
    elif kind == "meta_garbage":
        (tantivy / "meta.json").write_bytes(b"\x00\x17 not json {{{")
    elif kind == "segment_deleted":
        segment.unlink()
    elif kind == "now_a_file":
        shutil.rmtree(tantivy)
        tantivy.write_text("not an index")
    else:
        raise AssertionError(kind)


def lexical_view(store: Store) -> dict[tuple[str, str, Level], list[tuple[str, float]]]:
    return {
        (user, text, level): store.lexical_search(RowScope(user, level=level), text, 5)
        for user, text, level in QUERIES
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Two users, three commits (so Tantivy holds several segments)."""
    emb = HashingEmbedder(DIM)
    with open_store(tmp_path / "m", emb) as store:
        commit_texts(store, emb, "alice", ["Alice adopted a cat", "Alice sings"], segment_id="a1")
        commit_texts(store, emb, "alice", ["Alice joined a choir"], segment_id="a2")
        commit_texts(store, emb, "bob", ["Bob repairs old bicycles"], segment_id="b1")
    return tmp_path / "m"


@pytest.fixture
def before(folder: Path) -> dict[tuple[str, str, Level], list[tuple[str, float]]]:
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as store:
        view = lexical_view(store)
    assert all(view.values())
    return view


def _ids(view: dict[Any, list[tuple[str, float]]]) -> dict[Any, list[str]]:
    return {key: [i for i, _ in hits] for key, hits in view.items()}


def _warnings(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] in LEXICAL_WARNINGS]


@pytest.mark.parametrize("kind", DAMAGE)
def test_writer_open_rebuilds_a_damaged_index(folder: Path, before: Any, kind: str) -> None:
    damage(folder, kind)
    with capture_events() as events:
        store = open_store(folder, HashingEmbedder(DIM))
    with store:
        assert lexical_view(store) == before
        assert not store.lexical_unavailable
    rebuilt = [e for e in events if e["event"] == "store.lexical_rebuild"]
    assert rebuilt and rebuilt[0]["level"] == "warning"
    assert "tantivy" in rebuilt[0]["reason"]  # it names the index (and the damaged file)
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as reader:
        assert lexical_view(reader) == before and not reader.lexical_unavailable


@pytest.mark.parametrize("kind", DAMAGE)
def test_reader_searches_dense_only_and_flags_it(folder: Path, kind: str) -> None:
    damage(folder, kind)
    files = sorted(p.name for p in folder.rglob("*"))
    config = MemoryConfig.defaults(embedder=EMBEDDER)
    with capture_events() as events, Memory(folder, config=config, read_only=True) as mem:
        hybrid = [mem.search("cat", user_id="alice", k=3) for _ in range(3)][-1]
        dense = mem.search("cat", user_id="alice", k=3, mode="dense")
        lexical = mem.search("cat", user_id="alice", k=3, mode="lexical")
        assert store_of(mem).lexical_unavailable
    assert lexical == []
    assert [h.id for h in hybrid] == [h.id for h in dense] and hybrid
    assert all(h.lexical_unavailable and h.lexical_rank is None for h in hybrid)
    assert not any(h.lexical_unavailable for h in dense)  # no lexical branch was asked for
    assert len(_warnings(events)) == 1, _warnings(events)
    assert sorted(p.name for p in folder.rglob("*")) == files  # a reader repairs nothing


@pytest.mark.parametrize("kind", DAMAGE)
def test_reindex_command_rebuilds_a_damaged_index(folder: Path, before: Any, kind: str) -> None:
    damage(folder, kind)
    res = CliRunner().invoke(app, ["reindex", "-s", str(folder), "--embedder", EMBEDDER])
    assert res.exit_code == 0, res.output
    assert "indexed 4 summaries, 3 segments" in res.output
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as reader:
        assert lexical_view(reader) == before


def test_reindex_recreates_the_folder_of_an_open_writer(folder: Path, before: Any) -> None:
    with open_store(folder, HashingEmbedder(DIM)) as store:
        damage(folder, "meta_garbage")
        assert store.reindex() == {"summary": 4, "segment": 3}
        assert lexical_view(store) == before
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as reader:
        assert lexical_view(reader) == before


def test_folder_deleted_under_a_reader_falls_back_then_recovers(folder: Path, before: Any) -> None:
    emb = HashingEmbedder(DIM)
    with open_store(folder, emb) as writer, open_store(folder, emb, read_only=True) as reader:
        assert lexical_view(reader) == before
        shutil.rmtree(folder / "tantivy")
        with capture_events() as events:
            assert reader.lexical_search(RowScope("alice"), "cat", 5) == []
            assert reader.lexical_search(RowScope("alice"), "choir", 5) == []
        assert reader.lexical_unavailable and len(_warnings(events)) == 1
        # the writer's next commit finds its index gone and rebuilds it from LanceDB
        commit_texts(writer, emb, "alice", ["Alice paints owls"], segment_id="a3")
        assert [i for i, _ in writer.lexical_search(RowScope("alice"), "owls", 5)] == ["a3-s0"]
        assert [i for i, _ in reader.lexical_search(RowScope("alice"), "owls", 5)] == ["a3-s0"]
        assert not reader.lexical_unavailable
        cat = before[("alice", "cat", Level.SUMMARY)]
        assert [i for i, _ in reader.lexical_search(RowScope("alice"), "cat", 5)] == [
            i for i, _ in cat
        ]
    # the writer closed cleanly and left a consistent index
    with open_store(folder, emb) as again:
        assert again.counts()["summaries"] == 5
        assert [i for i, _ in again.lexical_search(RowScope("alice"), "owls", 5)] == ["a3-s0"]


def test_meta_garbage_under_a_reader_falls_back(folder: Path) -> None:
    emb = HashingEmbedder(DIM)
    with open_store(folder, emb, read_only=True) as reader:
        assert reader.lexical_search(RowScope("alice"), "cat", 5)
        damage(folder, "meta_garbage")
        assert reader.lexical_search(RowScope("alice"), "cat", 5) == []
        assert reader.lexical_unavailable


def test_folder_deleted_under_a_writer_is_repaired_by_the_next_commit(
    folder: Path, before: Any
) -> None:
    emb = HashingEmbedder(DIM)
    store = open_store(folder, emb)
    try:
        shutil.rmtree(folder / "tantivy")
        lexical_view(store)  # whatever it finds, it does not raise
        commit_texts(store, emb, "bob", ["Bob sails a small boat"], segment_id="b2")
        assert [i for i, _ in store.lexical_search(RowScope("bob"), "boat", 5)] == ["b2-s0"]
        # the same hits as before (scores move: the index now holds one more document)
        assert _ids(lexical_view(store)) == _ids(before)
    finally:
        store.close()  # a writer whose Tantivy threads died still closes cleanly


def test_search_command_says_its_hits_are_dense_only(folder: Path) -> None:
    damage(folder, "meta_garbage")
    args = ["search", "cat", "-u", "alice", "-s", str(folder), "--embedder", EMBEDDER]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "lexical index unavailable" in res.output and "Alice adopted a cat" in res.output
    res = CliRunner().invoke(app, [*args, "--json"])
    hits = [json.loads(ln) for ln in res.output.splitlines() if ln.startswith("{")]
    hits = [h for h in hits if "fused_score" in h]  # not the log lines
    assert hits and all(h["lexical_unavailable"] for h in hits)
