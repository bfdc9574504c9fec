"""The writer's memory of summaries it committed lately, and when the store vouches for one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hymem.core.types import SummaryRecord, SummaryStatus
from hymem.write.recent import RecentSummaries, vouched

WHEN = datetime(2024, 1, 1, 10, 0, tzinfo=UTC)


def _rec(i: str, text: str = "works at Acme", **update: Any) -> SummaryRecord:
    rec = SummaryRecord(
        id=i,
        user_id="dana",
        segment_id="seg",
        text=text,
        vector=[1.0, 0.0],
        source_turn_ids=["t1"],
        created_at=WHEN,
        updated_at=WHEN,
        valid_from=WHEN,
        metadata={"topic": "work"},
    )
    return rec.model_copy(update=update)


def _row(rec: SummaryRecord, **update: Any) -> dict[str, Any]:
    """The row a store hands back for `rec`: naive UTC times, as LanceDB does."""
    row = {
        "id": rec.id,
        "text": rec.text,
        "segment_id": rec.segment_id,
        "source_turn_ids": list(rec.source_turn_ids),
        "status": "active",
        "memory_id": rec.memory_id,
        "valid_from": rec.valid_from.replace(tzinfo=None) if rec.valid_from else None,
        "valid_to": None,
        "metadata": dict(rec.metadata),
    }
    return {**row, **update}


def test_keeps_only_active_records_with_vectors_and_forgets_the_oldest() -> None:
    recent = RecentSummaries(limit=2)
    recent.remember([_rec("a"), _rec("b", vector=None), _rec("c", status=SummaryStatus.SUPERSEDED)])
    assert set(recent.candidates("dana", ["a", "b", "c"])) == {"a"}
    recent.remember([_rec("d"), _rec("e")])
    assert set(recent.candidates("dana", ["a", "d", "e"])) == {"d", "e"}
    assert recent.candidates("erin", ["d"]) == {}  # another user's id is never handed out


def test_a_record_ended_by_this_writer_is_forgotten() -> None:
    recent = RecentSummaries()
    recent.remember([_rec("a")])
    recent.remember([_rec("a", status=SummaryStatus.SUPERSEDED)])
    assert recent.candidates("dana", ["a"]) == {}
    recent.remember([_rec("b")])
    recent.forget(["b"])
    assert len(recent) == 0


def test_the_store_vouches_for_an_unchanged_row() -> None:
    rec = _rec("a")
    assert vouched({"a": rec}, {"a": _row(rec)}) == {"a": rec}


def test_a_row_changed_since_is_read_from_the_store() -> None:
    rec = _rec("a")
    changed = [
        {"status": "superseded"},
        {"text": "works at Initech"},
        {"source_turn_ids": ["t1", "t2"]},
        {"memory_id": "other"},
        {"valid_to": datetime(2024, 2, 1)},
        {"metadata": {"topic": "home"}},
        {"segment_id": "seg2"},
    ]
    for update in changed:
        assert vouched({"a": rec}, {"a": _row(rec, **update)}) == {}, update
    assert vouched({"a": rec}, {}) == {}  # gone from the store (erased)
