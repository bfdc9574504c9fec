"""Folders written by older hymem are upgraded in place by the first writer that opens it,
resumably; a reader refuses one with the way to upgrade. Schema 1 (0.1.0): summaries without
provenance; schema 2: summaries without their context key."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
import pytest
from hymem.core.errors import HymemError, SchemaVersionError
from hymem.core.types import Attribution, Level
from hymem.indexes.lance import migrate
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store

from tests.fixtures_store import drop_metadata, make_segment, make_summary, set_version

pytestmark = pytest.mark.integration


def _version_one_folder(make_store: Callable[..., Store], tmp_path: Path) -> Path:
    """Two segments with three summaries, then taken back to schema 1 exactly as 0.1.0 wrote
    it: no provenance columns, `schema_version` 1 in meta.json and in the meta table."""
    store = make_store("old")
    segs = [
        make_segment("u", "g1", turn_ids=["t1", "t2"]),
        make_segment("u", "g2", turn_ids=["t3"]),
    ]
    sums = [
        make_summary("u", "a", "Alice moved to Paris", segment_id="g1"),
        make_summary("u", "b", "Alice adopted a cat", segment_id="g1"),
        make_summary("u", "c", "Bob bought a bike", segment_id="g2"),
    ]
    store.commit_segments("u", segs, sums, [])
    store.close()
    folder = tmp_path / "old"
    db = lancedb.connect(str(folder / "lance"))
    db.open_table(S.SUMMARIES).drop_columns(["source_turn_ids", "attribution", "context"])
    drop_metadata(db)
    set_version(folder, db, 1)
    return folder


def _provenance(store: Store) -> dict[str, tuple[list[str], Attribution]]:
    return {s.id: (s.source_turn_ids, s.attribution) for s in store.get_summaries("u")}


WHOLE_SEGMENTS = {
    "a": (["t1", "t2"], Attribution.SEGMENT),
    "b": (["t1", "t2"], Attribution.SEGMENT),
    "c": (["t3"], Attribution.SEGMENT),
}


def test_a_writer_upgrades_an_old_folder_and_a_reader_then_opens_it(
    make_store: Callable[..., Store], tmp_path: Path
) -> None:
    folder = _version_one_folder(make_store, tmp_path)
    with pytest.raises(SchemaVersionError, match="hymem upgrade"):
        make_store("old", read_only=True)
    store = make_store("old")
    assert _provenance(store) == WHOLE_SEGMENTS
    assert store.meta()["schema_version"] == S.SCHEMA_VERSION == 5
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 5
    assert {s.context for s in store.get_summaries("u")} == {""}  # whole segments: no line before
    query = make_summary("u", "q", "Alice moved to Paris").vector or []
    assert store.dense_rows(RowScope("u"), query, 1)[0]["source_turn_ids"] == ["t1", "t2"]
    store.close()
    reader = make_store("old", read_only=True)
    assert _provenance(reader) == WHOLE_SEGMENTS


def test_an_upgrade_killed_half_way_is_finished_by_the_next_open(
    make_store: Callable[..., Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _version_one_folder(make_store, tmp_path)
    monkeypatch.setattr(migrate, "FILL_BATCH_ROWS", 1)
    real = LanceTables.batches
    filled: list[int] = []

    def dies_after_one(
        self: LanceTables, name: str, *a: Any, **kw: Any
    ) -> Iterator[pa.RecordBatch]:
        for batch in real(self, name, *a, **kw):
            if name == S.SUMMARIES and filled:
                raise OSError("killed")
            if name == S.SUMMARIES:
                filled.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(LanceTables, "batches", dies_after_one)
    with pytest.raises((HymemError, OSError)):
        make_store("old")
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 1
    monkeypatch.setattr(LanceTables, "batches", real)
    store = make_store("old")
    assert _provenance(store) == WHOLE_SEGMENTS
    assert store.meta()["schema_version"] == 5


CHAT = (
    "[2023-05-08 13:56] Mel: What are your plans for the summer?\n"
    "[2023-05-08 13:57] Caro: Researching adoption agencies"
)


def _version_two_folder(make_store: Callable[..., Store], tmp_path: Path) -> Path:
    """A summary answering the line before it, written as schema 2 wrote it: no context."""
    store = make_store("v2")
    seg = make_segment("u", "g1", CHAT, turn_ids=["t1", "t2"])
    sums = [
        make_summary(
            "u",
            "a",
            "Caro is researching adoption agencies",
            segment_id="g1",
            source_turn_ids=["t2"],
            attribution=Attribution.SOURCE,
        ),
        make_summary(
            "u",
            "b",
            "Mel asked Caro a question",
            segment_id="g1",
            source_turn_ids=["t1"],
            attribution=Attribution.SOURCE,
        ),
    ]
    store.commit_segments("u", [seg], sums, [])
    store.close()
    folder = tmp_path / "v2"
    db = lancedb.connect(str(folder / "lance"))
    db.open_table(S.SUMMARIES).drop_columns(["context"])
    drop_metadata(db)
    set_version(folder, db, 2)
    return folder


def test_a_version_two_folder_gets_its_summaries_context_and_is_searched_by_it(
    make_store: Callable[..., Store], tmp_path: Path
) -> None:
    _version_two_folder(make_store, tmp_path)
    with pytest.raises(SchemaVersionError, match="hymem upgrade"):
        make_store("v2", read_only=True)
    store = make_store("v2")
    contexts = {s.id: s.context for s in store.get_summaries("u")}
    assert contexts == {"a": "Mel: What are your plans for the summer?", "b": ""}
    hits = store.lexical_search(RowScope("u", level=Level.SUMMARY), "summer plans", 5)
    assert [h[0] for h in hits] == ["a"]  # found by the line it answers, not its own words
    store.close()


def test_an_upgrade_to_three_killed_half_way_is_finished_by_the_next_open(
    make_store: Callable[..., Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _version_two_folder(make_store, tmp_path)
    real = migrate._fill_context
    calls: list[int] = []

    def dies_after_one(table: Any, ids: list[str], contexts: list[str]) -> int:
        if calls:
            raise OSError("killed")
        calls.append(len(ids))
        return real(table, ids[:1], contexts[:1])

    monkeypatch.setattr(migrate, "_fill_context", dies_after_one)
    with pytest.raises((HymemError, OSError)):
        make_store("v2")
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 2
    monkeypatch.setattr(migrate, "_fill_context", real)
    store = make_store("v2")
    contexts = {s.id: s.context for s in store.get_summaries("u")}
    assert contexts == {"a": "Mel: What are your plans for the summer?", "b": ""}
    assert store.meta()["schema_version"] == 5
