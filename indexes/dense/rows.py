"""The dense branch of a LanceDB-backed store: from memory when the user fits, else LanceDB.

`DenseRows` decides per query: a user whose rows fit the `DenseCache` budget is searched exactly
in memory (see `dense_cache`), the winners' rows coming from the same entry; any other user goes
to LanceDB's own vector search (IVF_PQ once the table is indexed). `hydrate` serves the lexical
branch's ids from the entry too, when it is loaded and current. It also turns
LanceDB columns and committed records into the cache's `Columns`, which is how the writer keeps
cached users fresh without re-reading them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hymem.core import metadata as M
from hymem.core.logging import get_logger
from hymem.core.time import micros
from hymem.core.types import Level, SegmentRecord, SummaryRecord, SummaryStatus
from hymem.indexes.dense.cache import (
    NO_STATUS,
    STATUS_CODES,
    Columns,
    DenseCache,
    Entry,
    SummaryLink,
)
from hymem.indexes.dense.scan import hit_rows, top_k_many, top_k_rows
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.protocol import HIT_COLUMNS, Row, RowScope, Vector

log = get_logger("hymem.indexes.dense.rows")

_FILTER_COLUMNS = ["id", "vector", "time_start", "time_end", "text", "metadata"]
# What links a row to the level below: kept in the entry so hits need no LanceDB lookup.
_LINK = {
    S.SUMMARIES: [
        "segment_id",
        "source_turn_ids",
        "attribution",
        "memory_id",
        "valid_from",
        "valid_to",
    ],
    S.SEGMENTS: ["turn_ids"],
}


def table_for(level: Level) -> str:
    return S.SUMMARIES if level is Level.SUMMARY else S.SEGMENTS


def columns_from_arrow(data: pa.Table, dim: int) -> Columns:
    n = data.num_rows
    vec = data.column("vector").combine_chunks()
    flat = vec.flatten().to_numpy(zero_copy_only=False) if n else np.zeros(0, np.float32)
    if "status" in data.column_names:
        codes = [STATUS_CODES.get(s, NO_STATUS) for s in data.column("status").to_pylist()]
        status = np.asarray(codes, dtype=np.int8)
    else:
        status = np.full(n, NO_STATUS, dtype=np.int8)
    start, end = (_micros_or_none(data.column(c)) for c in ("time_start", "time_end"))
    lo = np.where(start.mask, end.filled(0), start.filled(0))
    hi = np.where(end.mask, start.filled(0), end.filled(0))
    valid_to = None
    if "segment_id" in data.column_names:
        ends = data.column("valid_to").to_pylist()
        link = [
            SummaryLink(seg, tuple(src or ()), attribution, memory_id, since, until)
            for seg, src, attribution, memory_id, since, until in zip(
                data.column("segment_id").to_pylist(),
                data.column("source_turn_ids").to_pylist(),
                data.column("attribution").to_pylist(),
                data.column("memory_id").to_pylist(),
                data.column("valid_from").to_pylist(),
                ends,
                strict=True,
            )
        ]
        valid_to = np.asarray([micros(e) if e is not None else 0 for e in ends], dtype=np.int64)
    else:
        link = data.column("turn_ids").to_pylist()
    meta = None
    if "metadata" in data.column_names:
        meta = [M.decode(m) for m in data.column("metadata").to_pylist()]
    return Columns(
        ids=data.column("id").to_pylist(),
        vectors=np.asarray(flat, dtype=np.float32).reshape(n, dim),
        status=status,
        lo=lo.astype(np.int64),
        hi=hi.astype(np.int64),
        dated=~(np.ma.getmaskarray(start) & np.ma.getmaskarray(end)),
        text=data.column("text").to_pylist(),
        link=link,
        has_start=~np.ma.getmaskarray(start),
        has_end=~np.ma.getmaskarray(end),
        meta=meta,
        valid_to=valid_to,
    )


def _micros_or_none(col: pa.ChunkedArray) -> np.ma.MaskedArray:
    """A timestamp[us] column as int64 microseconds, nulls masked."""
    ints = pc.cast(col, pa.timestamp("us")).cast(pa.int64()).combine_chunks()
    values = ints.fill_null(0).to_numpy(zero_copy_only=False)
    mask = ints.is_null().to_numpy(zero_copy_only=False)
    return np.ma.MaskedArray(values, mask=np.asarray(mask, dtype=bool))


def columns_from_records(records: Sequence[SegmentRecord | SummaryRecord], dim: int) -> Columns:
    n = len(records)

    def t(value: datetime | None) -> int:
        return micros(value) if value is not None else 0

    status = [
        STATUS_CODES[SummaryStatus(r.status).value] if isinstance(r, SummaryRecord) else NO_STATUS
        for r in records
    ]
    starts = [r.time_start if r.time_start is not None else r.time_end for r in records]
    ends = [r.time_end if r.time_end is not None else r.time_start for r in records]
    return Columns(
        ids=[r.id for r in records],
        vectors=S.vector_matrix(records, dim) if n else np.zeros((0, dim), np.float32),
        status=np.asarray(status, dtype=np.int8),
        lo=np.asarray([t(v) for v in starts], dtype=np.int64),
        hi=np.asarray([t(v) for v in ends], dtype=np.int64),
        dated=np.asarray([v is not None for v in starts], dtype=bool),
        text=[r.text for r in records],
        link=[_link(r) for r in records],
        has_start=np.asarray([r.time_start is not None for r in records], dtype=bool),
        has_end=np.asarray([r.time_end is not None for r in records], dtype=bool),
        meta=[dict(r.metadata) for r in records],
        valid_to=np.asarray(
            [
                micros(r.valid_to) if isinstance(r, SummaryRecord) and r.valid_to else 0
                for r in records
            ],
            dtype=np.int64,
        ),
    )


def _link(rec: SegmentRecord | SummaryRecord) -> Any:
    if isinstance(rec, SummaryRecord):
        return SummaryLink(
            rec.segment_id,
            tuple(rec.source_turn_ids),
            rec.attribution.value,
            rec.memory_id,
            rec.valid_from,
            rec.valid_to,
        )
    return list(rec.turn_ids)


class DenseRows:
    """Dense top-k rows for one store; see the module docstring."""

    def __init__(self, lance: LanceTables, cache: DenseCache, dim: int, *, read_only: bool) -> None:
        self._lance = lance
        self.cache = cache
        self._dim = dim
        self._read_only = read_only
        # Tables a search had to send to LanceDB because the user's rows do not fit the cache:
        # only these need an ANN index (`maintenance`); `on_oversized` hears of each once.
        self.oversized: set[str] = set()
        self.on_oversized: Callable[[str], None] | None = None

    def search(self, scope: RowScope, vector: Vector, k: int, *, where: str) -> list[Row]:
        """Top-k rows (HIT_COLUMNS + `_distance`); `where` is the same scope in SQL, for the
        LanceDB path."""
        level = scope.level
        table = table_for(level)
        entry = self._entry(table, scope.user_id) if self.cache.enabled else None
        if entry is None:
            rows = self._lance.vector_search(table, vector, k, where, HIT_COLUMNS[level])
            return S.decode_metadata(rows)
        st = None
        if level is Level.SUMMARY and scope.statuses is not None:
            st = [SummaryStatus(x).value for x in scope.statuses]
        best, by_id = top_k_rows(
            entry,
            scope.user_id,
            vector,
            k,
            st,
            scope.time_range,
            scope.filters,
            scope.valid_at,
            summary=level is Level.SUMMARY,
        )
        out: list[Row] = []
        for i, d in best:
            row = by_id.get(i)
            if row is not None:  # a fresh dict per call: stamping it copies nothing
                row["_distance"] = d
                out.append(row)
        return out

    def search_many(
        self, scope: RowScope, vectors: Sequence[Vector], k: int
    ) -> list[list[tuple[str, float]]] | None:
        """(id, cosine similarity) of each vector's top k from the user's entry, or None when
        the user is not served from memory (then LanceDB must be asked)."""
        table = table_for(scope.level)
        entry = self._entry(table, scope.user_id) if self.cache.enabled else None
        if entry is None:
            if self.cache.enabled and self._lance.count(table, F.eq("user_id", scope.user_id)) == 0:
                return [[] for _ in vectors]  # a new user's first flush: nothing to search
            return None
        st = None
        if scope.level is Level.SUMMARY and scope.statuses is not None:
            st = [SummaryStatus(x).value for x in scope.statuses]
        return [
            [(i, 1.0 - d) for i, d in best]
            for best in top_k_many(
                entry, vectors, k, st, scope.time_range, scope.filters, scope.valid_at
            )
        ]

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row] | None:
        """The hit rows of `ids` from the user's loaded entry (ids it lacks are not in the
        table), or None when no current entry is loaded: then LanceDB must be asked."""
        if not self.cache.enabled:
            return None
        table = table_for(level)
        version = self._lance.version(table) if self._read_only else None
        entry = self.cache.get(table, user_id, version)
        if entry is None:
            return None
        return hit_rows(entry, user_id, ids, summary=level is Level.SUMMARY)

    def _entry(self, table: str, user_id: str) -> Entry | None:
        version = self._lance.version(table) if self._read_only else None
        entry = self.cache.get(table, user_id, version)
        if entry is not None:
            return entry
        rows = self._lance.count(table, F.eq("user_id", user_id))
        if rows == 0:
            return None
        if not self.cache.fits(rows):
            self._note_oversized(table, user_id, rows)
            return None

        def load() -> tuple[Columns, int | None]:
            loaded_at = self._lance.version(table)
            cols = [*_FILTER_COLUMNS, *_LINK[table]]
            if table == S.SUMMARIES:
                cols.append("status")
            data = self._lance.query(table, F.eq("user_id", user_id), cols)
            return columns_from_arrow(data, self._dim), loaded_at

        if self._read_only:
            self.cache.invalidate(user_id, [table])  # a stale version: load afresh
        return self.cache.load(table, user_id, load)

    def _note_oversized(self, table: str, user_id: str, rows: int) -> None:
        if table in self.oversized:
            return
        self.oversized.add(table)
        log.info("dense.user_over_cache", table=table, user_id=user_id, rows=rows)
        if self.on_oversized is not None:
            self.on_oversized(table)

    def changed(
        self, user_id: str, new: Sequence[SummaryRecord], rows: Sequence[dict[str, Any]]
    ) -> None:
        """Apply finished summary changes (new versions, rows whose status moved) to the
        user's loaded entry; nothing is loaded for a user not in the cache."""
        if not self.cache.enabled:
            return
        records = [*new, *S.rows_to_records(SummaryRecord, [dict(r) for r in rows])]
        if records:
            cols = columns_from_records(records, self._dim)
            self.cache.upsert(S.SUMMARIES, user_id, cols, None)

    def committed(
        self, user_id: str, segments: Sequence[SegmentRecord], summaries: Sequence[SummaryRecord]
    ) -> None:
        """Apply a finished commit of the writer to the user's cached entries."""
        for table, records in ((S.SEGMENTS, segments), (S.SUMMARIES, summaries)):
            if records:
                cols = columns_from_records(records, self._dim)
                self.cache.upsert(table, user_id, cols, None)


__all__ = ["DenseRows", "columns_from_arrow", "columns_from_records", "table_for"]
