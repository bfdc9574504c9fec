"""Short-term buffer planning: one summariser call per full buffer or ended session."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.types import TurnRecord
from hymem.write.buffer import (
    BufferedSegment,
    Unplanned,
    buffered_tokens,
    plan_due,
    plan_flush,
)

T0 = datetime(2024, 1, 1)


def segs(*spec: tuple[int, str]) -> list[BufferedSegment]:
    return [BufferedSegment(tokens=t, session_id=s) for t, s in spec]


def test_last_segment_stays_open_until_forced() -> None:
    buf = segs((100, "a"), (600, "a"))
    assert plan_flush(buf, buffer_tokens=512) == []
    assert plan_flush(buf, buffer_tokens=512, force=True) == [[0, 1]]


def test_buffer_flushes_once_it_reaches_th_including_the_crossing_segment() -> None:
    buf = segs((200, "a"), (200, "a"), (200, "a"), (100, "a"), (50, "a"))
    assert plan_flush(buf, buffer_tokens=512) == [[0, 1, 2]]
    assert plan_flush(buf, buffer_tokens=512, force=True) == [[0, 1, 2], [3, 4]]


def test_session_end_flushes_a_partial_buffer() -> None:
    buf = segs((100, "a"), (100, "a"), (100, "b"), (100, "b"))
    assert plan_flush(buf, buffer_tokens=512) == [[0, 1]]


def test_complete_segments_below_th_wait() -> None:
    assert plan_flush(segs((100, "a"), (100, "a"), (10, "a")), buffer_tokens=512) == []


def test_forced_flush_of_many_segments_uses_buffer_sized_calls() -> None:
    buf = segs(*[(100, "a")] * 50)
    batches = plan_flush(buf, buffer_tokens=512, force=True)
    assert [len(b) for b in batches] == [6] * 8 + [2]
    assert sorted(i for b in batches for i in b) == list(range(50))
    assert buffered_tokens(buf) == 5000


def test_empty_and_invalid() -> None:
    assert plan_flush([], buffer_tokens=10, force=True) == []
    with pytest.raises(ValueError):
        plan_flush([], buffer_tokens=0)


def turns(*sessions: str) -> list[TurnRecord]:
    return [
        TurnRecord(
            id=f"t{i}", user_id="u", session_id=s, seq=i, speaker="a", text="x", created_at=T0
        )
        for i, s in enumerate(sessions)
    ]


def test_a_plan_that_stored_nothing_waits_for_more_turns() -> None:
    last = Unplanned(turns=5, session_id="a")
    assert plan_due(turns(*"a" * 5), None, every=4)  # nothing failed yet: plan
    assert not plan_due(turns(*"a" * 6), last, every=4)
    assert not plan_due(turns(*"a" * 8), last, every=4)
    assert plan_due(turns(*"a" * 9), last, every=4)
    assert plan_due(turns(*"a" * 6), last, every=1)  # 1: every add plans, as before


def test_a_new_session_plans_at_once() -> None:
    """Its first turn ends the last session's segments, which can be stored now."""
    assert plan_due(turns(*"aaaaab"), Unplanned(turns=5, session_id="a"), every=4)
