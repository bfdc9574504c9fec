"""The state behind `InMemoryStore`: records keyed by (user_id, id), their vectors and a BM25
index, plus the row helpers that make its results look exactly like the LanceDB store's.

Shared by an `InMemoryStore` and its read-only views; every access holds `lock`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np
from hymem.core.time import to_utc, to_utc_or_none, utcnow
from hymem.core.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
)
from hymem.indexes.keys import lexical_text
from hymem.indexes.memory.bm25 import Bm25Index
from hymem.indexes.memory.lines import MemoryLines
from hymem.indexes.protocol import HIT_COLUMNS, Row, TimeRange
from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
Record = SegmentRecord | SummaryRecord
LexKey = tuple[Level, str, str]


def utc_record(rec: M) -> M:
    """A copy whose datetimes are naive UTC and whose vector is float32-rounded, as the
    LanceDB store returns them after its Arrow round trip."""
    update: dict[str, Any] = {
        name: to_utc(value) for name, value in rec if isinstance(value, datetime)
    }
    if isinstance(getattr(rec, "metadata", None), dict):
        update["metadata"] = dict(rec.metadata)  # type: ignore[attr-defined]  # checked just above
    vector = getattr(rec, "vector", None)
    if vector is not None:
        update["vector"] = np.asarray(vector, dtype=np.float32).tolist()
    return rec.model_copy(update=update)


def hit_row(level: Level, rec: Record) -> Row:
    """The HIT_COLUMNS row of a record, with plain strings for statuses like LanceDB's."""
    row: Row = {}
    for col in HIT_COLUMNS[level]:
        value = getattr(rec, col)
        if isinstance(value, StrEnum):
            value = value.value
        elif isinstance(value, dict):
            value = dict(value)
        row[col] = list(value) if isinstance(value, list) else value
    return row


def in_range(rec: Record, time_range: TimeRange | None) -> bool:
    """Does [time_start, time_end] overlap the range? A record with one bound is an instant;
    an undated record never matches a bounded range (the SQL filter's NULL semantics)."""
    if time_range is None:
        return True
    since, until = (to_utc_or_none(b) for b in time_range)
    start = rec.time_start or rec.time_end
    end = rec.time_end or rec.time_start
    if since is not None and (end is None or end < since):
        return False
    return not (until is not None and (start is None or start > until))


class MemoryTables:
    def __init__(self, created_at: datetime) -> None:
        self.created_at = created_at
        self.lock = threading.RLock()
        self.turns: dict[tuple[str, str], TurnRecord] = {}
        self.segments: dict[tuple[str, str], SegmentRecord] = {}
        self.summaries: dict[tuple[str, str], SummaryRecord] = {}
        self.vectors: dict[LexKey, np.ndarray] = {}
        self.traces: list[Row] = []
        self.bm25: Bm25Index[LexKey] = Bm25Index()
        self.sleep_lines = MemoryLines()

    def table(self, level: Level) -> dict[tuple[str, str], Any]:
        return self.summaries if level is Level.SUMMARY else self.segments

    @staticmethod
    def of_user(table: dict[tuple[str, str], M], user_id: str) -> list[M]:
        return [rec for (user, _), rec in table.items() if user == user_id]

    @staticmethod
    def copy(rec: SummaryRecord, with_vectors: bool) -> SummaryRecord:
        vector = list(rec.vector) if with_vectors and rec.vector is not None else None
        return rec.model_copy(update={"vector": vector})

    def put(self, level: Level, rec: Record, vector: np.ndarray) -> None:
        """Insert or replace one record (already normalised) with its validated vector."""
        key = (rec.user_id, rec.id)
        self.table(level)[key] = rec
        self.vectors[(level, *key)] = np.asarray(vector, dtype=np.float32)
        self.bm25.put((level, *key), lexical_text(rec.text, getattr(rec, "context", "")))

    def _drop(self, level: Level, user_id: str, id_: str) -> None:
        if self.table(level).pop((user_id, id_), None) is not None:
            self.vectors.pop((level, user_id, id_), None)
            self.bm25.remove((level, user_id, id_))

    def drop_summary(self, user_id: str, id_: str) -> None:
        self._drop(Level.SUMMARY, user_id, id_)

    def drop_segments(self, user_id: str, seg_ids: list[str]) -> None:
        """Remove these segments and every summary linked to them (a re-commit replaces)."""
        doomed = set(seg_ids)
        for seg_id in doomed:
            self._drop(Level.SEGMENT, user_id, seg_id)
        for rec in self.of_user(self.summaries, user_id):
            if rec.segment_id in doomed:
                self.drop_summary(user_id, rec.id)

    def set_status(self, user_id: str, changes: Sequence[StatusChange]) -> None:
        """Status changes of stored summaries (unknown ids skipped), as the real store's."""
        now = utcnow()
        for change in changes:
            old = self.summaries.get((user_id, change.summary_id))
            if old is None:
                continue
            old.status = SummaryStatus(change.status)
            old.updated_at = now
            old.superseded_by = change.superseded_by
            old.reason = change.reason
            old.evidence_id = change.evidence_id
            old.valid_to = to_utc_or_none(change.valid_to)
            if change.fact_key is not None:
                old.fact_key = change.fact_key

    def stored_owners(self, user_id: str, turn_ids: Iterable[str]) -> dict[str, str]:
        """Each of these turns that is stored -> the segment holding it."""
        out: dict[str, str] = {}
        for tid in turn_ids:
            turn = self.turns.get((user_id, tid))
            if turn is not None and turn.status is TurnStatus.STORED and turn.segment_id:
                out[tid] = turn.segment_id
        return out

    def reindex(self) -> dict[str, int]:
        """Rebuild the BM25 index from the records (summaries first, like the real store)."""
        self.bm25 = Bm25Index[LexKey]()
        for level in (Level.SUMMARY, Level.SEGMENT):
            for (user, id_), rec in self.table(level).items():
                self.bm25.put(
                    (level, user, id_), lexical_text(rec.text, getattr(rec, "context", ""))
                )
        return {Level.SUMMARY.value: len(self.summaries), Level.SEGMENT.value: len(self.segments)}


__all__ = ["MemoryTables", "hit_row", "in_range", "utc_record"]
