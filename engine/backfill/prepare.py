"""Preparing one user's history where the work is: the real write path on a private store.

A backfill worker (a Ray actor, or the calling process) runs hymem's own `Ingestor` (embedding,
topic segmentation, summarising, write-time consolidation: the store's embedder and model
settings) over an in-memory store that holds only this user, and taps that store's commits.
What comes back is the turns as `add()` accepted them and the exact commits the write path made,
in order, vectors included: committing them to the real store (`commit.py`) writes the very
records `add()` and `flush()` would have written there, through the same journaled calls.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hymem.backfill.histories import UserHistory
from hymem.config import MemoryConfig
from hymem.embedders import Embedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.llm import LazyRoles
from hymem.llm.roles import Roles
from hymem.time import utcnow
from hymem.types import SegmentRecord, StatusChange, SummaryRecord, TurnRecord, TurnStatus
from hymem.write.ingestor import Ingestor


@dataclass
class Commit:
    """One `commit_segments` (segments set) or `apply_summary_changes` (segments None) call."""

    summaries: list[SummaryRecord]
    changes: list[StatusChange]
    segments: list[SegmentRecord] | None = None
    stored_turn_ids: list[str] = field(default_factory=list)


@dataclass
class PreparedUser:
    user_id: str
    turns: list[TurnRecord]
    commits: list[Commit]
    pending: int  # turns the write path left pending (a summariser that failed on them)
    errors: list[str]


class _TappedStore(InMemoryStore):
    """The in-memory twin, recording each commit it makes (deep copies: the caller may reuse
    its records)."""

    def __init__(self, dim: int, embedder_name: str) -> None:
        super().__init__(dim, embedder_name=embedder_name)
        self.commits: list[Commit] = []

    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
        *,
        changes: Sequence[StatusChange] = (),
    ) -> None:
        super().commit_segments(user_id, segments, summaries, stored_turn_ids, changes=changes)
        self.commits.append(
            Commit(
                summaries=copy.deepcopy(list(summaries)),
                changes=copy.deepcopy(list(changes)),
                segments=copy.deepcopy(list(segments)),
                stored_turn_ids=list(stored_turn_ids),
            )
        )

    def apply_summary_changes(
        self, user_id: str, new: Sequence[SummaryRecord], changes: Sequence[StatusChange]
    ) -> None:
        super().apply_summary_changes(user_id, new, changes)
        self.commits.append(Commit(copy.deepcopy(list(new)), copy.deepcopy(list(changes))))


class Preparer:
    """Prepares users one after another with one embedder and one set of model roles."""

    def __init__(
        self, config: MemoryConfig, embedder: Embedder, *, roles: Roles | None = None
    ) -> None:
        self._config = config
        self._embedder = embedder
        self._roles = LazyRoles(config, embedder, given=roles)

    def prepare(self, history: UserHistory) -> PreparedUser:
        store = _TappedStore(self._embedder.dim, self._embedder.name)
        ingestor = Ingestor(store, self._embedder, self._roles, self._config, clock=utcnow)
        user = history.user_id
        errors: list[str] = []
        try:
            for session in history.sessions:
                result = ingestor.add(
                    session.messages,
                    user_id=user,
                    session_id=session.session_id,
                    timestamp=session.timestamp,
                )
                if result.error:
                    errors.append(result.error)
            final = ingestor.flush(user_id=user)
            if final.error:
                errors.append(final.error)
            turns = store.get_turns(user)
            return PreparedUser(
                user_id=user,
                turns=[_as_pending(t) for t in turns],
                commits=store.commits,
                pending=final.pending,
                errors=errors,
            )
        finally:
            ingestor.close()
            store.close()

    def close(self) -> None:
        self._roles.close()


def _as_pending(turn: TurnRecord) -> TurnRecord:
    """The turn as `add()` appends it: pending, in no segment (its commit stores it)."""
    return turn.model_copy(update={"status": TurnStatus.PENDING, "segment_id": None})


def prepare_many(
    config: MemoryConfig, embedder: Embedder, histories: Sequence[UserHistory], roles: Any = None
) -> list[PreparedUser]:
    """One worker's share, prepared in order (what a Ray task runs)."""
    preparer = Preparer(config, embedder, roles=roles)
    try:
        return [preparer.prepare(h) for h in histories]
    finally:
        preparer.close()


__all__ = ["Commit", "PreparedUser", "Preparer", "prepare_many"]
