"""Committing a prepared user to the real store: the write path's own calls, replayed.

The turns go in first as pending (one `append_turns`: turns already held are skipped, by id),
then each commit the write path made, in its order (`commit_segments`, journaled and atomic,
re-committing a segment replaces it and its summaries; `apply_summary_changes`, idempotent).
So a backfill killed at any point and run again stores every turn exactly once and every
summary once: the records are the same ids, and whatever landed is replaced by itself.

A user who already holds turns that are not in the prepared history is refused: a backfill
writes new users (or finishes its own earlier run), it does not merge into a live history.
"""

from __future__ import annotations

from dataclasses import dataclass

from hymem.backfill.prepare import PreparedUser
from hymem.errors import UserInputError
from hymem.indexes.protocol import Storage
from hymem.types import TurnStatus


@dataclass(frozen=True)
class Committed:
    user_id: str
    turns: int  # turns newly written by this run
    segments: int
    summaries: int


def already_stored(store: Storage, user_id: str, turn_count: int) -> bool:
    """Whether a user's history is already in the store, whole (an earlier run's): as many
    turns as the history has, none pending. Checked before preparing, to skip the work."""
    turns = store.get_turns(user_id)
    return len(turns) == turn_count and all(t.status is TurnStatus.STORED for t in turns)


def commit_prepared(store: Storage, prepared: PreparedUser) -> Committed:
    """Write `prepared` (the caller holds the user's right to write)."""
    user = prepared.user_id
    held = {t.id: t for t in store.get_turns(user)}
    ours = {t.id for t in prepared.turns}
    foreign = sorted(set(held) - ours)
    if foreign:
        raise UserInputError(
            f"user {user!r} already holds {len(foreign)} turn(s) this backfill did not write "
            f"(e.g. {foreign[0]!r}): backfill into a new user id, or erase the user first"
        )
    written = store.append_turns(prepared.turns) if prepared.turns else []
    segments = summaries = 0
    for commit in prepared.commits:
        if commit.segments is None:
            store.apply_summary_changes(user, commit.summaries, commit.changes)
        else:
            store.commit_segments(
                user,
                commit.segments,
                commit.summaries,
                commit.stored_turn_ids,
                changes=commit.changes,
            )
            segments += len(commit.segments)
        summaries += len(commit.summaries)
    return Committed(user, len(written), segments, summaries)


__all__ = ["Committed", "already_stored", "commit_prepared"]
