"""Short-term buffer planning (LightMem §3.2): which segments to summarise now, and in how many
calls. Pure: the buffer itself is derived from the store's pending turns on every add, so a crash
cannot lose it; this module only decides.

Rules, applied to the pending segments in order:
* the last segment is still open (its topic may continue) unless the caller forces a flush;
* segments accumulate into one buffer until its tokens reach `th` (the segment that crosses `th`
  is included), or the buffer's session ends (the next segment belongs to another session);
  each such buffer is one summariser call;
* complete segments that fill neither condition wait for more turns;
* `force` (flush) empties everything, still in buffers of about `th` tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hymem.core.types import TurnRecord


@dataclass(frozen=True, slots=True)
class BufferedSegment:
    """What the planner needs to know about one pending segment."""

    tokens: int  # tokens of the summariser's input for this segment
    session_id: str


def plan_flush(
    segments: Sequence[BufferedSegment], *, buffer_tokens: int, force: bool = False
) -> list[list[int]]:
    """Indices of the segments to summarise now, grouped one list per summariser call."""
    if buffer_tokens < 1:
        raise ValueError("buffer_tokens must be >= 1")
    batches: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    last = len(segments) - 1
    for k, seg in enumerate(segments):
        if k == last and not force:
            break
        current.append(k)
        tokens += seg.tokens
        session_end = k < last and segments[k + 1].session_id != seg.session_id
        if tokens >= buffer_tokens or session_end or k == last:
            batches.append(current)
            current, tokens = [], 0
    return batches


def buffered_tokens(segments: Sequence[BufferedSegment]) -> int:
    """Tokens currently waiting (for progress reports and `pending`)."""
    return sum(s.tokens for s in segments)


def may_flush(pending: Sequence[TurnRecord], tokens: Sequence[int], buffer_tokens: int) -> bool:
    """Whether `plan_flush` could choose anything, decided without vectors.

    A buffer flushes when its session ends or its tokens reach th. With one session pending
    and fewer than th tokens in all pending turns, neither can happen whatever the
    segmentation, so the turns need no embedding yet: one-turn adds stay cheap."""
    one_session = len({t.session_id for t in pending}) == 1
    return not one_session or sum(tokens) >= buffer_tokens


@dataclass(frozen=True, slots=True)
class Unplanned:
    """What the user's pending turns were when a plan last stored nothing: their count and the
    session of the last one."""

    turns: int
    session_id: str


def plan_due(pending: Sequence[TurnRecord], last: Unplanned | None, every: int) -> bool:
    """Whether an add should plan again (embed and segment its pending turns) now.

    Once the buffer is full, a plan stores nothing until a topic boundary shows up after its
    first segments, and each try embeds the turns that arrived since the last one: one-turn
    adds would embed one turn at a time, at several times the cost of one batch. So after a
    plan that stored nothing, the next waits for `every` more turns (or a new session, whose
    first turn ends the last one's segments); turns then become searchable at most
    `every - 1` turns later, and `flush` stores everything at once as before."""
    if last is None or every <= 1:
        return True
    if pending and pending[-1].session_id != last.session_id:
        return True
    return len(pending) - last.turns >= every
