"""The memory folder: LanceDB tables (source of truth) plus a derived Tantivy index.

Layout under `path`:
    lance/            LanceDB database: tables turns, segments, summaries, traces, meta
    tantivy/          lexical index over summaries and segments (derived; rebuildable)
    lexical_sync.json LanceDB table versions the lexical index was last synced with
    journal.json      present only while a multi-table write is in flight (crash repair)
    writer.lock       filelock held by the single writer for the store's lifetime
    meta.json         schema_version, embedder name, dimension, created_at (mirrored in `meta`)

Rules:
  * Every read and write takes `user_id`; filters are built with escaped literals so a user id
    such as "x' OR '1'='1" matches only that literal user.
  * Writes go LanceDB first, then Tantivy, then turn status; a journal makes the whole commit
    atomic from the caller's view and a crash is repaired on the next open (see `_writes.py`).
  * Writes are batched (one LanceDB add per table per call) to avoid fragment build-up.

Reads live here; the write path and repair live in `indexes/_writes.py`, traces in
`indexes/trace_table.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from hymem.errors import ReadOnlyStoreError, StoreClosedError, StoreError
from hymem.indexes import filters as F
from hymem.indexes import schema as S
from hymem.indexes._writes import WriteMixin
from hymem.indexes.lexical import LexicalIndex
from hymem.indexes.lock import META_FILE, WriterLock, check_meta, new_meta, read_json
from hymem.indexes.lock import write_json_atomic as _write_json
from hymem.indexes.trace_table import TraceMixin
from hymem.indexes.vectors import LanceTables
from hymem.logging import get_logger
from hymem.types import (
    Level,
    SegmentRecord,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
)

SCHEMA_VERSION = S.SCHEMA_VERSION

TimeRange = tuple[datetime | None, datetime | None]

log = get_logger("hymem.indexes.store")

HIT_COLUMNS = {
    Level.SUMMARY: ["id", "user_id", "text", "segment_id", "time_start", "time_end", "status"],
    Level.SEGMENT: ["id", "user_id", "text", "turn_ids", "time_start", "time_end"],
}
_NO_VECTOR = {
    S.SEGMENTS: [f.name for f in S.segments_schema(1) if f.name != "vector"],
    S.SUMMARIES: [f.name for f in S.summaries_schema(1) if f.name != "vector"],
}


def table_for(level: Level) -> str:
    return S.SUMMARIES if level is Level.SUMMARY else S.SEGMENTS


class Store(TraceMixin, WriteMixin):
    """Opened once per Memory. Thread-safe for concurrent readers; one writer process."""

    path: Path
    read_only: bool
    embedder_name: str
    dim: int

    def __init__(self) -> None:  # use Store.open
        self._closed = True

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        embedder_name: str,
        dim: int,
        read_only: bool = False,
        vector_index_min_rows: int = 20_000,
    ) -> Store:
        """Create or open. Raises StoreLockedError, SchemaVersionError, EmbedderMismatchError."""
        self = cls()
        self.path = Path(path)
        self.read_only = read_only
        self.embedder_name = embedder_name
        self.dim = int(dim)
        self.vector_index_min_rows = vector_index_min_rows
        self._write_lock = threading.RLock()
        self._writes_since_optimize = 0
        self._lock: WriterLock | None = None
        if read_only:
            if not (self.path / META_FILE).exists():
                raise StoreError(f"no hymem memory at {self.path} to open read-only")
        else:
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"{self.path} exists and is not a folder")
            self.path.mkdir(parents=True, exist_ok=True)
            self._lock = WriterLock(self.path)
        self._closed = False
        try:
            self._open_tables()
        except BaseException:
            self._closed = True
            if self._lock is not None:
                self._lock.release()
            raise
        log.info("store.open", path=str(self.path), read_only=read_only, dim=self.dim)
        return self

    def _open_tables(self) -> None:
        meta = read_json(self.path / META_FILE)
        if meta is not None:
            check_meta(
                meta,
                self.path,
                schema_version=SCHEMA_VERSION,
                embedder_name=self.embedder_name,
                dim=self.dim,
            )
        created = False
        self._lance = LanceTables(self.path / "lance", read_only=self.read_only)
        if meta is None:
            meta = self._meta_from_table()
        if self.read_only:
            for name in (S.TURNS, S.SEGMENTS, S.SUMMARIES, S.TRACES):
                if not self._lance.open_existing(name):
                    raise StoreError(f"{self.path} is missing its {name!r} table")
        else:
            self._lance.ensure(S.TURNS, S.turns_schema())
            self._lance.ensure(S.SEGMENTS, S.segments_schema(self.dim))
            self._lance.ensure(S.SUMMARIES, S.summaries_schema(self.dim))
            self._lance.ensure(S.TRACES, S.traces_schema())
            self._lance.ensure(S.META, S.meta_schema())
            if meta is None:
                meta = new_meta(SCHEMA_VERSION, self.embedder_name, self.dim)
                self._write_meta(meta)
                created = True
        self._lex = LexicalIndex(self.path / "tantivy", writable=not self.read_only)
        if created:
            self._write_sync()  # a new, empty store is in sync by construction
        self._repair_on_open()

    def _meta_from_table(self) -> dict[str, Any] | None:
        """The `meta` table's copy, for a folder whose meta.json was lost; checked like it."""
        if not self._lance.open_existing(S.META):
            return None
        meta: dict[str, Any] = {r["key"]: r["value"] for r in self._lance.rows(S.META, None)}
        if not meta:
            return None
        for key in ("schema_version", "dim"):
            if str(meta.get(key, "")).isdigit():
                meta[key] = int(meta[key])
        check_meta(
            meta,
            self.path,
            schema_version=SCHEMA_VERSION,
            embedder_name=self.embedder_name,
            dim=self.dim,
        )
        if not self.read_only:
            _write_json(self.path / META_FILE, meta)
        return meta

    def _write_meta(self, meta: dict[str, Any]) -> None:
        rows = [{"key": k, "value": str(v)} for k, v in meta.items()]
        self._lance.delete(S.META, "true")
        self._lance.add(S.META, pa.Table.from_pylist(rows, schema=S.meta_schema()))
        _write_json(self.path / META_FILE, meta)

    def meta(self) -> dict[str, Any]:
        return read_json(self.path / META_FILE) or {}

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._lex.close()
        if self._lock is not None:
            self._lock.release()
        log.info("store.close", path=str(self.path))

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the store at {self.path} is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} was opened read-only")

    # --- turns (write-ahead log) ---------------------------------------------------------
    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        """Turns ordered by seq."""
        self._check_open()
        where = F.conjunction(
            [
                F.eq("user_id", user_id),
                F.in_list("id", ids) if ids is not None else None,
                F.eq("status", TurnStatus(status).value) if status is not None else None,
            ]
        )
        rows = self._lance.rows(S.TURNS, where)
        rows.sort(key=lambda r: (r["seq"], r["id"]))
        return S.rows_to_records(TurnRecord, rows)

    def next_seq(self, user_id: str) -> int:
        self._check_open()
        seqs = self._lance.query(S.TURNS, F.eq("user_id", user_id), ["seq"]).column("seq")
        return (max(seqs.to_pylist()) + 1) if len(seqs) else 0

    # --- reads ---------------------------------------------------------------------------
    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]:
        """Segments in the order of `ids` (unknown ids skipped), without vectors."""
        self._check_open()
        if not ids:
            return []
        where = F.conjunction([F.eq("user_id", user_id), F.in_list("id", ids)])
        by_id = {r["id"]: r for r in self._lance.rows(S.SEGMENTS, where, _NO_VECTOR[S.SEGMENTS])}
        return S.rows_to_records(
            SegmentRecord, [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
        )

    def get_summaries(
        self,
        user_id: str,
        *,
        ids: Sequence[str] | None = None,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        with_vectors: bool = False,
    ) -> list[SummaryRecord]:
        """In the order of `ids` when given, else by (created_at, id)."""
        self._check_open()
        where = F.conjunction(
            [
                F.eq("user_id", user_id),
                F.in_list("id", ids) if ids is not None else None,
                self._status_clause(statuses),
            ]
        )
        cols = None if with_vectors else _NO_VECTOR[S.SUMMARIES]
        rows = self._lance.rows(S.SUMMARIES, where, cols)
        if ids is not None:
            by_id = {r["id"]: r for r in rows}
            rows = [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
        else:
            rows.sort(key=lambda r: (r["created_at"], r["id"]))
        return S.rows_to_records(SummaryRecord, rows)

    def iter_summaries(
        self,
        user_id: str | None = None,
        *,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        with_vectors: bool = True,
        batch_size: int = 10_000,
    ) -> Iterator[list[SummaryRecord]]:
        self._check_open()
        where = F.conjunction(
            [
                F.eq("user_id", user_id) if user_id is not None else None,
                self._status_clause(statuses),
            ]
        )
        cols = None if with_vectors else _NO_VECTOR[S.SUMMARIES]
        for batch in self._lance.batches(S.SUMMARIES, where, cols, batch_size):
            if batch.num_rows:
                yield S.rows_to_records(SummaryRecord, batch.to_pylist())

    def users(self) -> list[str]:
        self._check_open()
        found: set[str] = set()
        for name in (S.TURNS, S.SUMMARIES):
            found.update(self._lance.query(name, None, ["user_id"]).column("user_id").to_pylist())
        return sorted(found)

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        self._check_open()
        user = F.eq("user_id", user_id) if user_id is not None else None

        def n(table: str, *extra: str | None) -> int:
            clauses = [c for c in (user, *extra) if c]
            return self._lance.count(table, F.conjunction(clauses) if clauses else None)

        return {
            "turns": n(S.TURNS),
            "pending_turns": n(S.TURNS, F.eq("status", TurnStatus.PENDING.value)),
            "segments": n(S.SEGMENTS),
            "summaries": n(S.SUMMARIES),
            "active_summaries": n(S.SUMMARIES, F.eq("status", SummaryStatus.ACTIVE.value)),
            "traces": n(S.TRACES),
        }

    @staticmethod
    def _status_clause(statuses: Sequence[SummaryStatus] | None) -> str | None:
        if statuses is None:
            return None
        return F.in_list("status", [SummaryStatus(s).value for s in statuses])

    # --- search primitives (fusion lives in indexes/hybrid.py) ---------------------------
    def dense_rows(
        self,
        user_id: str,
        vector: Sequence[float],
        k: int,
        *,
        level: Level = Level.SUMMARY,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        time_range: TimeRange | None = None,
    ) -> list[dict[str, Any]]:
        """Top-k rows (HIT_COLUMNS + `_distance`) by cosine distance, best first."""
        self._check_open()
        if len(vector) != self.dim:
            raise StoreError(
                f"query vector has {len(vector)} dimensions; the store holds {self.dim}"
            )
        where = F.conjunction(
            [
                F.eq("user_id", user_id),
                self._status_clause(statuses) if level is Level.SUMMARY else None,
                F.time_overlap(*time_range) if time_range else None,
            ]
        )
        return self._lance.vector_search(table_for(level), vector, k, where, HIT_COLUMNS[level])

    def dense_search(
        self,
        user_id: str,
        vector: Sequence[float],
        k: int,
        *,
        level: Level = Level.SUMMARY,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        time_range: TimeRange | None = None,
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) best first. `statuses` applies to summaries only."""
        rows = self.dense_rows(
            user_id, vector, k, level=level, statuses=statuses, time_range=time_range
        )
        return [(r["id"], 1.0 - float(r["_distance"])) for r in rows]

    def lexical_search(
        self,
        user_id: str,
        text: str,
        k: int,
        *,
        level: Level = Level.SUMMARY,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        time_range: TimeRange | None = None,
    ) -> list[tuple[str, float]]:
        """(id, BM25) best first. Any text is accepted; never raises on user text."""
        self._check_open()
        if self.read_only:
            self._lex.reload()
        st = None if statuses is None else [SummaryStatus(s).value for s in statuses]
        return self._lex.search(user_id, text, k, level=level, statuses=st, time_range=time_range)

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """HIT_COLUMNS rows for `ids` of one user, in one query."""
        self._check_open()
        if not ids:
            return {}
        where = F.conjunction([F.eq("user_id", user_id), F.in_list("id", ids)])
        rows = self._lance.rows(table_for(level), where, HIT_COLUMNS[level])
        return {r["id"]: r for r in rows}


__all__ = ["SCHEMA_VERSION", "Store", "TimeRange"]
