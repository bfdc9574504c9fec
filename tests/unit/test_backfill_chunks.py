"""How a prepared user's segments are cut into commits: each stored turn must land in the
segment that stored it, and no commit holds more than COMMIT_SEGMENTS segments."""

from __future__ import annotations

from datetime import datetime

from hymem.backfill import commit as C
from hymem.core.types import SegmentRecord

T0 = datetime(2024, 1, 1)


def seg(sid: str, *turns: str) -> SegmentRecord:
    return SegmentRecord(
        id=sid, user_id="u", session_ids=["s"], turn_ids=list(turns), text=sid, created_at=T0
    )


def ids(chunks: list[list[SegmentRecord]]) -> list[list[str]]:
    return [[s.id for s in chunk] for chunk in chunks]


def test_an_overlap_turn_stored_by_the_earlier_segment_keeps_one_commit() -> None:
    segments = [seg("a", "t1", "t2"), seg("b", "t2", "t3")]
    stored_in: dict[str, str | None] = {"t1": "a", "t2": "a", "t3": "b"}
    assert ids(C.commit_chunks(segments, stored_in)) == [["a", "b"]]


def test_a_turn_stored_by_the_later_of_two_covering_segments_puts_that_one_first() -> None:
    segments = [seg("a", "t1", "t2"), seg("b", "t2", "t3"), seg("c", "t4")]
    stored_in: dict[str, str | None] = {"t1": "a", "t2": "b", "t3": "b", "t4": "c"}
    [chunk] = ids(C.commit_chunks(segments, stored_in))
    assert sorted(chunk) == ["a", "b", "c"] and chunk.index("b") < chunk.index("a")


def test_segments_storing_each_others_turns_go_in_separate_commits() -> None:
    segments = [seg("a", "t1", "t2"), seg("b", "t1", "t2")]
    stored_in: dict[str, str | None] = {"t1": "a", "t2": "b"}
    assert ids(C.commit_chunks(segments, stored_in)) == [["a"], ["b"]]


def test_commits_hold_at_most_the_limit(monkeypatch: object) -> None:
    segments = [seg(f"s{i}", f"t{i}") for i in range(5)]
    stored_in: dict[str, str | None] = {f"t{i}": f"s{i}" for i in range(5)}
    monkeypatch.setattr(C, "COMMIT_SEGMENTS", 2)  # type: ignore[attr-defined]  # pytest's fixture, typed loosely here
    assert ids(C.commit_chunks(segments, stored_in)) == [["s0", "s1"], ["s2", "s3"], ["s4"]]
