"""The read half of `Store`: guarded delegation of every read and search to `RecordReader`
and `TraceTable`. Kept apart from the lifecycle and the writes (`store.py`) so each file holds
one responsibility; `Store` inherits it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from hymem.filters import Filter
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.trace_table import TraceTable
from hymem.indexes.paging import PageKey
from hymem.indexes.protocol import ACTIVE_ONLY, SCAN_BATCH_ROWS, Row, RowScope, Vector
from hymem.indexes.store.faults import guarded, storage_faults
from hymem.indexes.store.records import RecordReader
from hymem.types import Level, SegmentRecord, SummaryRecord, SummaryStatus, TurnRecord


class StoreReads:
    """Reads of an open store; the promises are written once, on `Storage`."""

    path: Path | str
    _records: RecordReader
    _traces: TraceTable

    def _check_open(self) -> None:
        raise NotImplementedError

    def _fresh(self) -> None:
        """Before a search: within the staleness bound of other writers' commits? (Only an
        object store has other writers: `store_remote`.)"""

    # --- records ---------------------------------------------------------------------------
    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]:
        self._check_open()
        with storage_faults(self.path, "reading segments"):
            return self._records.get_segments(user_id, ids)

    def get_summaries(
        self,
        user_id: str,
        *,
        ids: Sequence[str] | None = None,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = False,
    ) -> list[SummaryRecord]:
        self._check_open()
        with storage_faults(self.path, "reading summaries"):
            return self._records.get_summaries(
                user_id, ids=ids, statuses=statuses, with_vectors=with_vectors
            )

    def iter_summaries(
        self,
        user_id: str | None = None,
        *,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = True,
        batch_size: int = SCAN_BATCH_ROWS,
    ) -> Iterator[list[SummaryRecord]]:
        self._check_open()
        batches = self._records.iter_summaries(
            user_id, statuses=statuses, with_vectors=with_vectors, batch_size=batch_size
        )
        return guarded(batches, self.path, "reading summaries")

    def users(self) -> list[str]:
        self._check_open()
        with storage_faults(self.path, "listing users"):
            return self._records.users()

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        self._check_open()
        with storage_faults(self.path, "counting rows"):
            return self._records.counts(user_id)

    def page(
        self,
        user_id: str,
        level: str,
        *,
        after: PageKey | None = None,
        limit: int = 100,
        statuses: Sequence[str] | None = None,
        filters: Filter | None = None,
    ) -> list[TurnRecord | SegmentRecord | SummaryRecord]:
        self._check_open()
        with storage_faults(self.path, f"listing {level}s"):
            return self._records.page(
                user_id, level, after=after, limit=limit, statuses=statuses, filters=filters
            )

    # --- search primitives (fusion lives in engine/search/hybrid.py) ---------------------------
    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        self._check_open()
        self._fresh()
        with storage_faults(self.path, "a dense search"):
            return self._records.dense_rows(scope, vector, k)

    def dense_search(self, scope: RowScope, vector: Vector, k: int) -> list[tuple[str, float]]:
        return S.similarities(self.dense_rows(scope, vector, k))

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        self._check_open()
        self._fresh()
        return self._records.lexical_search(scope, text, k)

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        self._check_open()
        with storage_faults(self.path, "reading hits"):
            return self._records.hydrate(user_id, Level(level), ids)

    # --- traces ---------------------------------------------------------------------------
    def read_traces(
        self, user_id: str | None = None, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        self._check_open()
        with storage_faults(self.path, "reading traces"):
            return self._traces.read(user_id, since)


__all__ = ["StoreReads"]
