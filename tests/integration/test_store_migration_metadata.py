"""A schema-3 folder (written before metadata) is upgraded to 4 by the first writer that opens
it: every older row gets empty metadata, filters work on it at once, and new rows carry theirs.
An upgrade killed between tables is finished by the next open."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lancedb
import pytest
from hymem.core.errors import HymemError, SchemaVersionError
from hymem.core.filters import Filter
from hymem.indexes.lance import migrate
from hymem.indexes.lance import schema as S
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store

from tests.fixtures_store import (
    drop_metadata,
    make_segment,
    make_summary,
    make_turns,
    set_version,
)

pytestmark = pytest.mark.integration


def _version_three_folder(make_store: Callable[..., Store], tmp_path: Path) -> Path:
    store = make_store("v3")
    store.append_turns(make_turns("u", 2))
    seg = make_segment("u", "g1", "we walked by the lake", turn_ids=["t0", "t1"])
    sums = [
        make_summary("u", "a", "Alice walked by the lake", segment_id="g1"),
        make_summary("u", "b", "Bob walked by the lake too", segment_id="g1"),
    ]
    store.commit_segments("u", [seg], sums, ["t0", "t1"])
    store.close()
    folder = tmp_path / "v3"
    db = lancedb.connect(str(folder / "lance"))
    drop_metadata(db)
    set_version(folder, db, 3)
    return folder


def _check_upgraded(store: Store) -> None:
    assert store.meta()["schema_version"] == S.SCHEMA_VERSION == 5
    assert {t.metadata.get("x", "none") for t in store.get_turns("u")} == {"none"}
    assert all(s.metadata == {} for s in store.get_summaries("u"))
    assert store.get_segments("u", ["g1"])[0].metadata == {}
    query = make_summary("q", "q", "walked by the lake").vector or []
    keep_all = Filter.parse({"agent_id": {"ne": "x"}})
    assert {i for i, _ in store.dense_search(RowScope("u", filters=keep_all), query, 5)} == {
        "a",
        "b",
    }
    assert {i for i, _ in store.lexical_search(RowScope("u", filters=keep_all), "lake", 5)} == {
        "a",
        "b",
    }
    only = Filter.parse({"agent_id": "x"})
    assert store.dense_search(RowScope("u", filters=only), query, 5) == []
    assert store.lexical_search(RowScope("u", filters=only), "lake", 5) == []


def test_a_version_three_folder_gets_empty_metadata_and_then_takes_new(
    make_store: Callable[..., Store], tmp_path: Path
) -> None:
    folder = _version_three_folder(make_store, tmp_path)
    with pytest.raises(SchemaVersionError, match="hymem upgrade"):
        make_store("v3", read_only=True)
    store = make_store("v3", dense_cache_bytes=0)  # dense queries through LanceDB's SQL
    _check_upgraded(store)
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 5
    tagged = make_summary(
        "u", "c", "Carol walked by the lake", segment_id="g2", metadata={"agent_id": "x"}
    )
    store.commit_segments("u", [make_segment("u", "g2")], [tagged], [])
    only = Filter.parse({"agent_id": "x"})
    assert [i for i, _ in store.lexical_search(RowScope("u", filters=only), "lake", 5)] == ["c"]
    store.close()
    reader = make_store("v3", read_only=True)
    assert reader.get_summaries("u", ids=["c"])[0].metadata == {"agent_id": "x"}


def test_an_upgrade_to_four_killed_between_tables_is_finished_by_the_next_open(
    make_store: Callable[..., Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _version_three_folder(make_store, tmp_path)
    real = migrate._fill_metadata
    done: list[str] = []

    def dies_after_one(lance: Any, name: str, schema: Any) -> int:
        if done:
            raise OSError("killed")
        done.append(name)
        return real(lance, name, schema)

    monkeypatch.setattr(migrate, "_fill_metadata", dies_after_one)
    with pytest.raises((HymemError, OSError)):
        make_store("v3")
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 3
    db = lancedb.connect(str(folder / "lance"))
    assert "metadata" in db.open_table(done[0]).schema.names  # one table was done
    assert "metadata" not in db.open_table(S.SUMMARIES).schema.names
    monkeypatch.setattr(migrate, "_fill_metadata", real)
    _check_upgraded(make_store("v3"))
