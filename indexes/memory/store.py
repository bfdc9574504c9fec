"""`InMemoryStore`: the `Storage` protocol in dicts and numpy, for fast tests of components.

It is a real store, not a stub: the conformance suite (`tests/conformance`) runs the same
behavioural tests against it and against the LanceDB + Tantivy `Store`. Dense search is exact
cosine over float32 vectors (what LanceDB's flat search computes); lexical search is BM25 with
Tantivy's formula over the shared analyzer's tokens (`indexes/memory/bm25.py`); filters, orderings,
id idempotency, validation errors and traces follow the protocol's promises. Every datetime is
normalised to naive UTC on the way in, as the real store's Arrow conversion does.

Nothing persists; one lock serialises every call, so it is safe to share across threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from hymem.core.errors import ReadOnlyStoreError, StoreClosedError
from hymem.core.filters import Filter
from hymem.core.time import to_utc, utcnow
from hymem.core.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
)
from hymem.indexes.lance import schema as S
from hymem.indexes.lexical.index import query_terms
from hymem.indexes.lexical.sync import PROGRESS_EVERY
from hymem.indexes.memory.lines import MemoryLines
from hymem.indexes.memory.manage import (
    check_page_key,
    erase_from,
    page_of,
    stored_versions,
    withdraw_from,
)
from hymem.indexes.memory.search import candidates, nearest_many, nearest_rows
from hymem.indexes.memory.tables import MemoryTables, hit_row, utc_record
from hymem.indexes.paging import PageKey
from hymem.indexes.protocol import ACTIVE_ONLY, SCAN_BATCH_ROWS, Row, RowScope, Vector
from hymem.indexes.store.commits import (
    check_owner,
    check_unclaimed,
    check_versions,
    covering_segments,
)

MEMORY_PATH = Path(":memory:")


def _statuses(statuses: Sequence[SummaryStatus] | None) -> set[str] | None:
    return None if statuses is None else {SummaryStatus(s).value for s in statuses}


def _batched(rows: list[SummaryRecord], size: int) -> Iterator[list[SummaryRecord]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


class InMemoryStore:
    """A `Storage` that lives in this process only (promises: see `Storage`).
    `read_only_view()` gives a second handle on the same data that refuses writes, like a
    read-only `Store` beside its writer."""

    def __init__(
        self,
        dim: int,
        *,
        embedder_name: str = "in-memory",
        path: Path = MEMORY_PATH,
        read_only: bool = False,
        _tables: MemoryTables | None = None,
    ) -> None:
        self.dim = int(dim)
        self.embedder_name = embedder_name
        self._path = path
        self._read_only = read_only
        self._t = _tables if _tables is not None else MemoryTables(utcnow())
        self._closed = False

    @property
    def path(self) -> Path:
        return self._path

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def lexical_unavailable(self) -> bool:
        return False  # nothing derived to damage

    def read_only_view(self) -> InMemoryStore:
        return InMemoryStore(
            self.dim,
            embedder_name=self.embedder_name,
            path=self._path,
            read_only=True,
            _tables=self._t,
        )

    def meta(self) -> dict[str, Any]:
        return {
            "schema_version": S.SCHEMA_VERSION,
            "embedder": self.embedder_name,
            "dim": self.dim,
            "created_at": self._t.created_at.isoformat(timespec="seconds"),
        }

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> InMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> threading.RLock:
        if self._closed:
            raise StoreClosedError(f"the store at {self._path} is closed")
        return self._t.lock

    def _check_writable(self) -> threading.RLock:
        lock = self._check_open()
        if self._read_only:
            raise ReadOnlyStoreError(f"{self._path} was opened read-only")
        return lock

    # --- one writer -----------------------------------------------------------------------
    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        """One process, one writer: the right to write is always held."""
        self._check_writable()
        return nullcontext(False)

    def catch_up(self) -> dict[str, int]:
        self._check_open()
        return {}

    def replica_lag_s(self) -> float | None:
        return None  # one process, one writer: never behind

    # --- turns ---------------------------------------------------------------------------
    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        want = None if status is None else TurnStatus(status)
        with self._check_open():
            rows = [
                t.model_copy()
                for t in self._t.of_user(self._t.turns, user_id)
                if (ids is None or t.id in ids) and (want is None or t.status == want)
            ]
        return sorted(rows, key=lambda t: (t.seq, t.id))

    def next_seq(self, user_id: str) -> int:
        with self._check_open():
            return 1 + max((t.seq for t in self._t.of_user(self._t.turns, user_id)), default=-1)

    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        del fresh_ids  # a dict lookup is free: every id is checked
        with self._check_writable():
            fresh: dict[tuple[str, str], TurnRecord] = {}
            for t in turns:
                key = (t.user_id, t.id)
                if key not in self._t.turns:
                    fresh.setdefault(key, utc_record(t))
            self._t.turns.update(fresh)
        return [t.id for t in fresh.values()]

    # --- journaled writes (atomic here because they run under one lock) ----------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
        *,
        changes: Sequence[StatusChange] = (),
    ) -> None:
        with self._check_writable():
            check_owner(user_id, [*segments, *summaries])
            seg_vecs = S.vector_matrix(segments, self.dim)  # validates before any change
            sum_vecs = S.vector_matrix(summaries, self.dim)
            seg_of = covering_segments(segments, stored_turn_ids)
            owners = self._t.stored_owners(user_id, seg_of)
            check_unclaimed(user_id, seg_of, owners, [s.id for s in segments])
            self._t.drop_segments(user_id, [s.id for s in segments])
            for s in summaries:
                self._t.drop_summary(user_id, s.id)
            for seg, vec in zip(segments, seg_vecs, strict=True):
                self._t.put(Level.SEGMENT, utc_record(seg), vec)
            for rec, vec in zip(summaries, sum_vecs, strict=True):
                self._t.put(Level.SUMMARY, utc_record(rec), vec)
            self._t.set_status(user_id, changes)
            for tid, seg_id in seg_of.items():
                turn = self._t.turns.get((user_id, tid))
                if turn is not None:
                    turn.status, turn.segment_id = TurnStatus.STORED, seg_id

    def apply_summary_changes(
        self,
        user_id: str,
        new: Sequence[SummaryRecord],
        changes: Sequence[StatusChange],
        *,
        expect: Sequence[SummaryRecord] | None = None,
    ) -> None:
        with self._check_writable():
            check_owner(user_id, new)
            if expect is not None:
                check_versions(user_id, expect, stored_versions(self._t, user_id, expect))
            vecs = S.vector_matrix(new, self.dim)
            for rec, vec in zip(new, vecs, strict=True):
                self._t.put(Level.SUMMARY, utc_record(rec), vec)
            self._t.set_status(user_id, changes)

    # --- reads ---------------------------------------------------------------------------
    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]:
        with self._check_open():
            found = [self._t.segments.get((user_id, i)) for i in dict.fromkeys(ids)]
            return [s.model_copy(update={"vector": None}) for s in found if s is not None]

    def get_summaries(
        self,
        user_id: str,
        *,
        ids: Sequence[str] | None = None,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = False,
        memory_ids: Sequence[str] | None = None,
        fact_keys: Sequence[str] | None = None,
        keyed: bool = False,
    ) -> list[SummaryRecord]:
        allowed = _statuses(statuses)
        with self._check_open():
            if ids is not None:
                found = [self._t.summaries.get((user_id, i)) for i in dict.fromkeys(ids)]
                rows = [r for r in found if r is not None]
            else:
                rows = sorted(
                    self._t.of_user(self._t.summaries, user_id), key=lambda r: (r.created_at, r.id)
                )
            rows = [r for r in rows if allowed is None or r.status.value in allowed]
            if memory_ids is not None:
                rows = [r for r in rows if r.memory_id in set(memory_ids)]
            if fact_keys is not None:
                rows = [r for r in rows if r.fact_key in set(fact_keys)]
            if keyed:
                rows = [r for r in rows if r.fact_key is not None]
            return [self._t.copy(r, with_vectors) for r in rows]

    def iter_summaries(
        self,
        user_id: str | None = None,
        *,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = True,
        batch_size: int = SCAN_BATCH_ROWS,
    ) -> Iterator[list[SummaryRecord]]:
        allowed = _statuses(statuses)
        with self._check_open():  # a snapshot, like a LanceDB scan of one table version
            rows = [
                self._t.copy(r, with_vectors)
                for (u, _), r in self._t.summaries.items()
                if (user_id is None or u == user_id)
                and (allowed is None or r.status.value in allowed)
            ]
        return _batched(rows, max(1, batch_size))

    def users(self) -> list[str]:
        with self._check_open():
            return sorted({u for u, _ in self._t.turns} | {u for u, _ in self._t.summaries})

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        def mine(keys: Any) -> list[Any]:
            return [k for k in keys if user_id is None or k[0] == user_id]

        with self._check_open():
            turns = [self._t.turns[k] for k in mine(self._t.turns)]
            sums = [self._t.summaries[k] for k in mine(self._t.summaries)]
            traces = [r for r in self._t.traces if user_id is None or r["user_id"] == user_id]
            return {
                "turns": len(turns),
                "pending_turns": sum(t.status is TurnStatus.PENDING for t in turns),
                "segments": len(mine(self._t.segments)),
                "summaries": len(sums),
                "active_summaries": sum(s.status is SummaryStatus.ACTIVE for s in sums),
                "traces": len(traces),
            }

    # --- search primitives ---------------------------------------------------------------
    def _candidates(self, scope: RowScope) -> list[str]:
        return candidates(self._t, scope)

    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        S.check_query_vector(vector, self.dim)
        with self._check_open():
            return nearest_rows(self._t, scope, vector, k)

    def dense_search(self, scope: RowScope, vector: Vector, k: int) -> list[tuple[str, float]]:
        return S.similarities(self.dense_rows(scope, vector, k))

    def dense_search_many(
        self, scope: RowScope, vectors: Sequence[Vector], k: int
    ) -> list[list[tuple[str, float]]]:
        for vector in vectors:
            S.check_query_vector(vector, self.dim)
        with self._check_open():
            return nearest_many(self._t, scope, vectors, k)

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        with self._check_open():
            ids = self._candidates(scope)
            allowed = [(scope.level, scope.user_id, i) for i in ids]
            hits = self._t.bm25.search(query_terms(text), allowed, k)
        return [(key[2], score) for key, score in hits]

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        level = Level(level)
        with self._check_open():
            table = self._t.table(level)
            found = [table.get((user_id, i)) for i in ids]
            return {r.id: hit_row(level, r) for r in found if r is not None}

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
        check_page_key(level, after)
        with self._check_open():
            return page_of(
                self._t,
                user_id,
                level,
                after=after,
                limit=limit,
                statuses=statuses,
                filters=filters,
            )

    def withdraw(
        self, user_id: str, turn_ids: Sequence[str], segment_ids: Sequence[str]
    ) -> dict[str, int]:
        with self._check_writable():
            return withdraw_from(self._t, user_id, turn_ids, segment_ids)

    def erase_user(self, user_id: str) -> dict[str, int]:
        with self._check_writable():
            return erase_from(self._t, user_id)

    def sleep_log(self) -> MemoryLines:
        self._check_open()
        return self._t.sleep_lines

    # --- traces --------------------------------------------------------------------------
    def write_trace(self, trace: dict[str, Any]) -> None:
        lock = self._check_writable()
        row = S.trace_row(trace)  # the real store's validation and JSON payload
        with lock:
            self._t.traces.append(row)

    def read_traces(
        self,
        user_id: str | None = None,
        since: datetime | None = None,
        *,
        trace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        bound = None if since is None else to_utc(since)
        with self._check_open():
            rows = [
                r
                for r in self._t.traces
                if (user_id is None or r["user_id"] == user_id)
                and (trace_id is None or r["trace_id"] == trace_id)
                and (bound is None or r["created_at"] >= bound)
            ]
        rows.sort(key=lambda r: (r["created_at"], r["trace_id"]))
        return [S.trace_from_row(r) for r in rows]

    # --- maintenance ---------------------------------------------------------------------
    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        with self._check_writable():
            counts = self._t.reindex()
        total = sum(counts.values())
        if progress is not None:
            for start in range(0, total, PROGRESS_EVERY):
                progress(min(PROGRESS_EVERY, total - start))
        return counts

    def optimize(self) -> None:
        """Nothing to compact in memory; still refused on a read-only or closed store."""
        self._check_writable()


__all__ = ["InMemoryStore"]
