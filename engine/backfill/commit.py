"""Committing a prepared user to the real store: the write path's final rows, journaled.

The turns go in first as pending (one `append_turns`: turns already held are skipped, by id),
then the segments with their summaries, every version with its status, in journaled
`commit_segments` calls of up to `COMMIT_SEGMENTS` segments, each marking the turns it stores
(a crash between them leaves the rest pending, never half a segment). Re-committing a segment
replaces it and the summaries linked to it, so a backfill killed at any point and run again
stores every turn and every summary once: the same ids, and what landed is replaced by itself.

A user who already holds turns that are not in the prepared history is refused: a backfill
writes new users (or finishes its own earlier run), it does not merge into a live history.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from typing import Protocol

from hymem.backfill.prepare import PreparedUser
from hymem.core.errors import UserInputError
from hymem.core.types import SegmentRecord, SummaryRecord, TurnStatus
from hymem.indexes.ports import Commits, Turns

COMMIT_SEGMENTS = 200  # segments (with their summaries) per journaled commit, as import uses


@dataclass(frozen=True)
class Committed:
    user_id: str
    turns: int  # turns newly written by this run
    segments: int
    summaries: int


class BackfillStore(Turns, Commits, Protocol):
    """What a backfill commit touches: the user's turns appended, its rows committed."""


def already_stored(store: BackfillStore, user_id: str, turn_count: int) -> bool:
    """Whether a user's history is already in the store, whole (an earlier run's): as many
    turns as the history has, none pending. Checked before preparing, to skip the work."""
    turns = store.get_turns(user_id)
    return len(turns) == turn_count and all(t.status is TurnStatus.STORED for t in turns)


def commit_chunks(
    segments: list[SegmentRecord], stored_in: dict[str, str | None]
) -> list[list[SegmentRecord]]:
    """`segments` in commits of at most `COMMIT_SEGMENTS`, each ordered so that every stored
    turn lands in the segment that stored it. A commit gives a turn to the first of its
    segments that covers it, and a turn can be covered by two (an overlap turn, which the later
    segment may be the one to store), so within a commit each turn's own segment goes before
    the others covering it; where those orders conflict, the segment starts the next commit."""
    chunks: list[list[SegmentRecord]] = []
    for i in range(0, len(segments), COMMIT_SEGMENTS):
        chunks.extend(_owner_first(segments[i : i + COMMIT_SEGMENTS], stored_in))
    return chunks


def _owner_first(
    chunk: list[SegmentRecord], stored_in: dict[str, str | None]
) -> list[list[SegmentRecord]]:
    by_id = {seg.id: seg for seg in chunk}
    after: dict[str, set[str]] = {seg.id: set() for seg in chunk}  # segment -> must follow
    for seg in chunk:
        for tid in seg.turn_ids:
            owner = stored_in.get(tid)
            if owner in by_id and owner != seg.id:
                after[seg.id].add(owner)
    try:
        order = list(graphlib.TopologicalSorter(after).static_order())
    except graphlib.CycleError:  # two segments each storing a turn the other covers
        half = len(chunk) // 2
        if half == 0:
            return [chunk]
        return _owner_first(chunk[:half], stored_in) + _owner_first(chunk[half:], stored_in)
    return [[by_id[sid] for sid in order]]


def commit_prepared(store: BackfillStore, prepared: PreparedUser) -> Committed:
    """Write `prepared` (the caller holds the user's right to write)."""
    user = prepared.user_id
    held = {t.id for t in store.get_turns(user)}
    foreign = sorted(held - {t.id for t in prepared.turns})
    if foreign:
        raise UserInputError(
            f"user {user!r} already holds {len(foreign)} turn(s) this backfill did not write "
            f"(e.g. {foreign[0]!r}): backfill into a new user id, or erase the user first"
        )
    pending = [
        t.model_copy(update={"status": TurnStatus.PENDING, "segment_id": None})
        for t in prepared.turns
    ]
    written = store.append_turns(pending) if pending else []
    stored_in = {t.id: t.segment_id for t in prepared.turns if t.status is TurnStatus.STORED}
    by_segment: dict[str, list[SummaryRecord]] = {}
    for rec in prepared.summaries:
        by_segment.setdefault(rec.segment_id, []).append(rec)
    summaries = 0
    for chunk in commit_chunks(prepared.segments, stored_in):
        ids = {seg.id for seg in chunk}
        sums = [rec for seg in chunk for rec in by_segment.get(seg.id, [])]
        covered = [tid for seg in chunk for tid in seg.turn_ids if stored_in.get(tid) in ids]
        store.commit_segments(user, chunk, sums, list(dict.fromkeys(covered)))
        summaries += len(sums)
    return Committed(user, len(written), len(prepared.segments), summaries)


__all__ = ["COMMIT_SEGMENTS", "Committed", "already_stored", "commit_chunks", "commit_prepared"]
