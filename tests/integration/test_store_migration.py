"""A folder written by hymem 0.1.0 (schema 1: summaries without provenance) is upgraded in place
by the first writer that opens it, resumably; a reader refuses it with the way to upgrade."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
import pytest
from hymem.errors import HymemError, SchemaVersionError
from hymem.indexes import migrate
from hymem.indexes import schema as S
from hymem.indexes.store import Store
from hymem.indexes.vectors import LanceTables
from hymem.types import Attribution

from tests.fixtures_store import make_segment, make_summary

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
    db.open_table(S.SUMMARIES).drop_columns(["source_turn_ids", "attribution"])
    meta_table = db.open_table(S.META)
    meta_table.update(where="key = 'schema_version'", values={"value": "1"})
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "schema_version": 1}))
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
    assert store.meta()["schema_version"] == S.SCHEMA_VERSION == 2
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 2
    query = make_summary("u", "q", "Alice moved to Paris").vector or []
    assert store.dense_rows("u", query, 1)[0]["source_turn_ids"] == ["t1", "t2"]
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
    assert store.meta()["schema_version"] == 2
