"""Preparing one user's history where the work is: the real write path on a private store.

A backfill worker (a Ray actor, or the calling process) runs hymem's own `Ingestor` (embedding,
topic segmentation, summarising, write-time consolidation: the store's embedder and model
settings) over an in-memory store that holds only this user. What comes back is that store's
final state for the user, vectors included: its turns (each stored in its segment, or pending),
its segments and every version of every summary with its status. Committing them to the real
store (`commit.py`) leaves there the very rows `add()` and `flush()` would have left, in a few
journaled commits instead of one per flush.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from hymem.backfill.histories import UserHistory
from hymem.core.config import MemoryConfig
from hymem.core.time import utcnow
from hymem.core.types import SegmentRecord, StatusChange, SummaryRecord, TurnRecord
from hymem.embed.embedders import Embedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.llm import LazyRoles
from hymem.llm.roles import Roles
from hymem.write.ingestor import Ingestor
from hymem.write.request import add_request


@dataclass
class PreparedUser:
    user_id: str
    turns: list[TurnRecord]  # as the write path left them: stored (with segment_id) or pending
    segments: list[SegmentRecord]  # in commit order, with vectors
    summaries: list[SummaryRecord]  # every version, with its status and vector
    pending: int  # turns the write path left pending (a summariser that failed on them)
    errors: list[str]


class _TappedStore(InMemoryStore):
    """The in-memory twin, keeping the segments it commits with their vectors (its reads
    return segments without them)."""

    def __init__(self, dim: int, embedder_name: str) -> None:
        super().__init__(dim, embedder_name=embedder_name)
        self.segments: dict[str, SegmentRecord] = {}

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
        for seg in segments:
            self.segments[seg.id] = copy.deepcopy(seg)


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
                    add_request(
                        session.messages,
                        user_id=user,
                        session_id=session.session_id,
                        timestamp=session.timestamp,
                    )
                )
                if result.error:
                    errors.append(result.error)
            final = ingestor.flush(user_id=user)
            if final.error:
                errors.append(final.error)
            held = {s.id for s in store.get_segments(user, list(store.segments))}
            return PreparedUser(
                user_id=user,
                turns=store.get_turns(user),
                segments=[s for sid, s in store.segments.items() if sid in held],
                summaries=store.get_summaries(user, statuses=None, with_vectors=True),
                pending=final.pending,
                errors=errors,
            )
        finally:
            ingestor.close()
            store.close()

    def close(self) -> None:
        self._roles.close()


__all__ = ["PreparedUser", "Preparer"]
