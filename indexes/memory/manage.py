"""The in-memory twin's paging, erasure and writer rights (`Storage.page`, `erase_user`,
`writing`), kept apart from `memory_store.py` so each file holds one concern; `InMemoryStore`
inherits it."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

from hymem.filters import Filter
from hymem.indexes import paging as P
from hymem.indexes.memory.tables import MemoryTables
from hymem.indexes.paging import PageKey
from hymem.types import Level, SegmentRecord, SummaryRecord, TurnRecord

Record = TurnRecord | SegmentRecord | SummaryRecord


class MemoryManage:
    """Paging and erasure over `MemoryTables` (promises: see `Storage`)."""

    _t: MemoryTables

    def _check_open(self) -> threading.RLock:
        raise NotImplementedError

    def _check_writable(self) -> threading.RLock:
        raise NotImplementedError

    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        """One process, one writer: the right to write is always held."""
        self._check_writable()
        return nullcontext(False)

    def catch_up(self) -> dict[str, int]:
        self._check_open()
        return {}

    def page(
        self,
        user_id: str,
        level: str,
        *,
        after: PageKey | None = None,
        limit: int = 100,
        statuses: Sequence[str] | None = None,
        filters: Filter | None = None,
    ) -> list[Record]:
        P.after_clause(level, after)  # the same type checks as the real store
        table = {"turn": self._t.turns, "segment": self._t.segments}.get(level, self._t.summaries)
        allowed = None if statuses is None or level == "segment" else set(statuses)
        with self._check_open():
            found: dict[PageKey, Record] = {}
            for rec in self._t.of_user(table, user_id):
                status = getattr(rec, "status", None)
                if allowed is not None and (status is None or status.value not in allowed):
                    continue
                if filters is not None and not filters.matches(rec.metadata):
                    continue
                key = P.key_of(level, rec.model_dump())
                if after is None or key > after:
                    found[key] = rec
            keys = P.first(found, limit)
            return [found[k].model_copy(update=_no_vector(level)) for k in keys]

    def erase_user(self, user_id: str) -> dict[str, int]:
        t = self._t
        with self._check_writable():
            removed = {
                "turns": len(t.of_user(t.turns, user_id)),
                "segments": len(t.of_user(t.segments, user_id)),
                "summaries": len(t.of_user(t.summaries, user_id)),
                "traces": sum(r["user_id"] == user_id for r in t.traces),
            }
            for level in (Level.SEGMENT, Level.SUMMARY):
                for rec in t.of_user(t.table(level), user_id):
                    t.table(level).pop((user_id, rec.id))
                    t.vectors.pop((level, user_id, rec.id), None)
                    t.bm25.remove((level, user_id, rec.id))
            for key in [k for k in t.turns if k[0] == user_id]:
                del t.turns[key]
            t.traces[:] = [r for r in t.traces if r["user_id"] != user_id]
        return removed


def _no_vector(level: str) -> dict[str, None]:
    return {} if level == "turn" else {"vector": None}


__all__ = ["MemoryManage"]
