"""Reads of segments and summaries, and the search primitives over them (LanceDB + Tantivy).

Every filter is built by `indexes.filters` from escaped literals, inside the index, before any
top-k cut. The caller (the `Store`) checks that the store is open.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from hymem.core.filters import Filter
from hymem.core.types import (
    Level,
    SegmentRecord,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
)
from hymem.indexes import paging as P
from hymem.indexes.dense.rows import DenseRows, table_for
from hymem.indexes.filter_compile import to_sql
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.paging import PageKey
from hymem.indexes.protocol import (
    ACTIVE_ONLY,
    HIT_COLUMNS,
    SCAN_BATCH_ROWS,
    Row,
    RowScope,
    Vector,
)

_SKIP = {"vector", *S.DERIVED}
_NO_VECTOR = {
    S.SEGMENTS: [f.name for f in S.segments_schema(1) if f.name not in _SKIP],
    S.SUMMARIES: [f.name for f in S.summaries_schema(1) if f.name not in _SKIP],
}


_MODEL_OF: dict[str, type[TurnRecord] | type[SegmentRecord] | type[SummaryRecord]] = {
    "turn": TurnRecord,
    "segment": SegmentRecord,
    "summary": SummaryRecord,
}

# The most rows one search primitive returns, whatever k a direct caller of the store passes:
# LanceDB and Tantivy size buffers by k (the facade bounds k far lower, by MemoryConfig.max_k).
STORE_MAX_K = 100_000


# An as-of lexical search reads this many times k from Tantivy, whose documents carry a
# status but no validity, and keeps the rows `RowScope.admits` (superseded rows are few).
VALIDITY_OVERFETCH = 3


def status_clause(
    statuses: Sequence[SummaryStatus] | None, valid_at: datetime | None = None
) -> str | None:
    """`RowScope.admits` in SQL."""
    if statuses is None:
        return None
    listed = F.in_list("status", [SummaryStatus(s).value for s in statuses])
    if valid_at is None:
        return listed
    superseded = F.eq("status", SummaryStatus.SUPERSEDED.value)
    return f"({listed}) OR ({superseded} AND valid_to > {F.ts_literal(valid_at)})"


def _in_order(rows: list[Row], ids: Sequence[str]) -> list[Row]:
    by_id = {r["id"]: r for r in rows}
    return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]


class RecordReader:
    """Segment and summary reads plus dense (LanceDB) and lexical (Tantivy) search."""

    def __init__(
        self, lance: LanceTables, lex: LexicalIndex, dense: DenseRows, dim: int, *, read_only: bool
    ) -> None:
        self._lance = lance
        self._lex = lex
        self._dense = dense
        self._dim = dim
        self._read_only = read_only

    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]:
        if not ids:
            return []
        rows = self._lance.rows(S.SEGMENTS, F.user_ids(user_id, ids), _NO_VECTOR[S.SEGMENTS])
        return S.rows_to_records(SegmentRecord, _in_order(rows, ids))

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
        where = F.conjunction(
            [
                F.eq("user_id", user_id),
                F.in_list("id", ids) if ids is not None else None,
                F.in_list("memory_id", memory_ids) if memory_ids is not None else None,
                F.in_list("fact_key", fact_keys) if fact_keys is not None else None,
                "fact_key IS NOT NULL" if keyed else None,
                status_clause(statuses),
            ]
        )
        cols = None if with_vectors else _NO_VECTOR[S.SUMMARIES]
        rows = self._lance.rows(S.SUMMARIES, where, cols)
        if ids is not None:
            rows = _in_order(rows, ids)
        else:
            rows.sort(key=lambda r: (r["created_at"], r["id"]))
        return S.rows_to_records(SummaryRecord, rows)

    def iter_summaries(
        self,
        user_id: str | None = None,
        *,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = True,
        batch_size: int = SCAN_BATCH_ROWS,
    ) -> Iterator[list[SummaryRecord]]:
        where = F.conjunction(
            [
                F.eq("user_id", user_id) if user_id is not None else None,
                status_clause(statuses),
            ]
        )
        cols = None if with_vectors else _NO_VECTOR[S.SUMMARIES]
        for batch in self._lance.batches(S.SUMMARIES, where, cols, batch_size):
            if batch.num_rows:
                yield S.rows_to_records(SummaryRecord, batch.to_pylist())

    def users(self) -> list[str]:
        found: set[str] = set()
        for name in (S.TURNS, S.SUMMARIES):
            found.update(self._lance.query(name, None, ["user_id"]).column("user_id").to_pylist())
        return sorted(found)

    def counts(self, user_id: str | None = None) -> dict[str, int]:
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
        """One keyset page: scan only the key columns of the rows after `after`, keep the
        first `limit` keys, then read those rows whole. Segments and summaries are filtered
        inside LanceDB; turns keep their metadata as JSON only, so theirs is read with the keys
        and matched here."""
        table = P.TABLE_OF[level]
        status = (
            F.in_list("status", statuses) if statuses is not None and level != "segment" else None
        )
        in_sql = filters is not None and level != "turn"
        clauses = [F.eq("user_id", user_id), status, P.after_clause(level, after)]
        where = F.conjunction([*clauses, to_sql(filters) if in_sql and filters else None])
        cols = ["id", P.ORDER_COLUMN[level]]
        keys = self._lance.rows(
            table, where, cols if in_sql or filters is None else [*cols, "metadata"]
        )
        if filters is not None and not in_sql:
            keys = [r for r in S.decode_metadata(keys) if filters.matches(r["metadata"])]
        ids = [id_ for _, id_ in P.first((P.key_of(level, r) for r in keys), limit)]
        if not ids:
            return []
        rows = self._lance.rows(table, F.user_ids(user_id, ids), _NO_VECTOR.get(table))
        model = _MODEL_OF[level]
        return S.rows_to_records(model, _in_order(rows, ids))

    # --- search primitives ---------------------------------------------------------------
    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        S.check_query_vector(vector, self._dim)
        k = min(k, STORE_MAX_K)
        where = F.conjunction(
            [
                F.eq("user_id", scope.user_id),
                status_clause(scope.statuses, scope.valid_at)
                if scope.level is Level.SUMMARY
                else None,
                F.time_overlap(*scope.time_range) if scope.time_range else None,
                to_sql(scope.filters) if scope.filters is not None else None,
            ]
        )
        return self._dense.search(scope, vector, k, where=where)

    def dense_search(self, scope: RowScope, vector: Vector, k: int) -> list[tuple[str, float]]:
        return S.similarities(self.dense_rows(scope, vector, k))

    def dense_search_many(
        self, scope: RowScope, vectors: Sequence[Vector], k: int
    ) -> list[list[tuple[str, float]]]:
        """From the user's cached matrix in one product when it is loaded, else one LanceDB
        query per vector."""
        for vector in vectors:
            S.check_query_vector(vector, self._dim)
        k = min(k, STORE_MAX_K)
        found = self._dense.search_many(scope, vectors, k)
        if found is not None:
            return found
        return [S.similarities(self.dense_rows(scope, v, k)) for v in vectors]

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        k = min(k, STORE_MAX_K)
        if self._read_only:  # another process writes: pick up its commits
            self._lex.reload()
        st = None if scope.statuses is None else [SummaryStatus(s).value for s in scope.statuses]
        dated = scope.valid_at is not None and st is not None and scope.level is Level.SUMMARY
        if dated and st is not None:  # superseded rows too, then `admits` on their validity
            st = [*st, SummaryStatus.SUPERSEDED.value]
        found = self._lex.search(
            scope.user_id,
            text,
            min(STORE_MAX_K, k * VALIDITY_OVERFETCH) if dated else k,
            level=scope.level,
            statuses=st,
            time_range=scope.time_range,
            filters=scope.filters,
        )
        if not dated:
            return found
        rows = self.hydrate(scope.user_id, scope.level, [i for i, _ in found])
        kept = [
            (i, score)
            for i, score in found
            if i in rows and scope.admits(rows[i]["status"], rows[i].get("valid_to"))
        ]
        return kept[:k]

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        level = Level(level)  # a caller may pass its value
        if not ids:
            return {}
        cached = self._dense.hydrate(user_id, level, ids)
        if cached is not None:
            return cached
        rows = self._lance.rows(table_for(level), F.user_ids(user_id, ids), HIT_COLUMNS[level])
        return {r["id"]: r for r in S.decode_metadata(rows)}


__all__ = ["RecordReader", "status_clause", "table_for"]
