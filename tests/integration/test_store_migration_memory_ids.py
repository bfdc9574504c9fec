"""A schema-4 folder (written before stable memory ids) is upgraded to 5 by the first writer:
every version gets its chain's first id as its memory id and its time as `valid_from`, so an
agent's memory id and `history()` work on memories corrected before the upgrade. An upgrade
killed half-way is finished by the next open."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import lancedb
import pytest
from hymem.core.errors import HymemError
from hymem.core.types import StatusChange, SummaryStatus
from hymem.indexes.lance import migrate
from hymem.indexes.lance import schema as S
from hymem.indexes.store.store import Store

from tests.fixtures_store import (
    BASE_TIME,
    drop_memory_ids,
    make_segment,
    make_summary,
    make_turns,
    set_version,
)

pytestmark = pytest.mark.integration


def _version_four_folder(make_store: Callable[..., Store], tmp_path: Path) -> Path:
    store = make_store("v4")
    store.append_turns(make_turns("u", 2))
    seg = make_segment("u", "g1", "we walked by the lake", turn_ids=["t0", "t1"])
    sums = [
        make_summary("u", "a", "Alice lives in Lisbon", segment_id="g1"),
        make_summary("u", "c", "Carol walked by the lake", segment_id="g1", start=None),
    ]
    store.commit_segments("u", [seg], sums, ["t0", "t1"])
    for version, (old, new) in enumerate([("a", "a2"), ("a2", "a3")], start=2):
        rec = make_summary(
            "u",
            new,
            f"Alice lives in Porto ({version})",
            segment_id="g1",
            version=version,
            previous_id=old,
        )
        change = StatusChange(summary_id=old, status=SummaryStatus.SUPERSEDED, superseded_by=new)
        store.apply_summary_changes("u", [rec], [change])
    store.close()
    folder = tmp_path / "v4"
    db = lancedb.connect(str(folder / "lance"))
    drop_memory_ids(db)
    set_version(folder, db, 4)
    assert "memory_id" not in db.open_table(S.SUMMARIES).schema.names
    return folder


def _check_upgraded(store: Store, folder: Path) -> None:
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 5
    got = {s.id: s for s in store.get_summaries("u", statuses=None)}
    assert {i: s.memory_id for i, s in got.items()} == {"a": "a", "a2": "a", "a3": "a", "c": "c"}
    assert got["a3"].valid_from == BASE_TIME  # when the fact was said
    assert got["c"].valid_from == got["c"].created_at  # undated: when it was written
    assert all(s.valid_to is None and s.fact_key is None for s in got.values())
    assert [s.id for s in store.get_summaries("u", memory_ids=["a"], statuses=None)] == [
        "a",
        "a2",
        "a3",
    ]


def test_a_version_four_folder_gets_memory_ids_from_its_chains(
    make_store: Callable[..., Store], tmp_path: Path
) -> None:
    folder = _version_four_folder(make_store, tmp_path)
    _check_upgraded(make_store("v4"), folder)


def test_an_upgrade_to_five_killed_half_way_is_finished_by_the_next_open(
    make_store: Callable[..., Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _version_four_folder(make_store, tmp_path)
    monkeypatch.setattr(migrate, "FILL_BATCH_ROWS", 1)
    real = migrate._root
    calls: list[str] = []

    def dies_on_the_second(user: str, sid: str, previous: dict[tuple[str, str], str | None]) -> str:
        if calls:
            raise OSError("killed")
        calls.append(sid)
        return real(user, sid, previous)

    monkeypatch.setattr(migrate, "_root", dies_on_the_second)
    with pytest.raises((HymemError, OSError)):
        make_store("v4")
    assert json.loads((folder / "meta.json").read_text())["schema_version"] == 4
    db = lancedb.connect(str(folder / "lance"))
    filled = db.open_table(S.SUMMARIES).count_rows("memory_id IS NOT NULL")
    assert filled == 1  # one batch landed before the kill
    monkeypatch.setattr(migrate, "_root", real)
    _check_upgraded(make_store("v4"), folder)
