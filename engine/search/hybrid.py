"""Hybrid retrieval: dense (LanceDB cosine) + BM25 (Tantivy) fused by reciprocal rank.

Each branch fetches a deeper candidate list (max(2k, 20) by default: `candidate_depth`) than
the k returned, because an item ranked 15th by both retrievers should beat one ranked 3rd by
only one of them. Both branches are filtered by user_id (and status, time range, metadata
`Filter`) inside the index, never after the cut. Text, times and the segment link come from
LanceDB: dense hits carry them from the vector query itself, and the lexical candidates are
looked up by id in one query, in a worker thread that overlaps the query embedding (`close()`
stops those threads). A lexical id that LanceDB no longer holds is dropped, so a stale lexical
index can never serve an orphan. The two branches read the store at two moments, so a memory
corrected in between can come back as its old version from one read and its new one from the
other: such candidates are read again together and each memory is served once, at the version
that read holds active (`hymem.search.versions`). While the store's lexical index is unusable
(`LexicalSearch.lexical_unavailable`: damaged, not yet rebuilt) the lexical branch finds nothing, so
hybrid search is dense only and every hit says so (`Hit.lexical_unavailable`).

One search signature: `find(query, scope, vector=None)` takes a `SearchScope` checked at the
API edge (`hymem.search.scope`) and checks nothing again; `search(query, **arguments)` takes
`Memory.search`'s arguments, builds the scope with the same one function, and calls `find`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from hymem.core.errors import UserInputError
from hymem.core.filters import Filter
from hymem.core.logging import get_logger
from hymem.core.types import Hit, Level, SummaryStatus
from hymem.core.validation import MAX_K, MAX_QUERY_CHARS
from hymem.embed.embedders import Embedder
from hymem.indexes.ports import DenseSearch, LexicalSearch
from hymem.indexes.protocol import Row, RowScope, Vector
from hymem.search.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from hymem.search.scope import SearchMode, SearchScope, search_scope
from hymem.search.versions import one_version_each

if TYPE_CHECKING:  # hymem.core.config imports hymem.search.fusion: no cycle at run time
    from hymem.core.config import MemoryConfig

# Defaults of MemoryConfig.search_depth_factor / search_min_candidates / search_threads.
# Twice k lets an item both retrievers rank moderately reach the fused top k; the floor of 20
# keeps small-k searches (k=1..10) from fusing two lists too short to agree on anything.
DEPTH_FACTOR = 2
MIN_CANDIDATES = 20
# Lexical-branch workers: each search uses one while its own thread runs the dense branch, so
# this many searches overlap fully; more would only contend for the same cores.
SEARCH_THREADS = 4

# What the lexical branch hands back: (id, BM25) best first, the rows of those ids, and
# whether the lexical index was unusable (its hits then missing, not merely absent).
_LexicalResult = tuple[list[tuple[str, float]], dict[str, Row], bool]

log = get_logger("hymem.search.hybrid")


@dataclass(frozen=True, slots=True)
class Ranked:
    """One query's hybrid ranking as ids, before any row is read: the fused ids best first,
    each branch's (rank, score) by id, the dense rankings of the further vectors searched in
    the same scan (`also`), and whether the lexical index was unusable. A caller that reads
    only the top few reads only their rows (`HybridSearcher.rows`, `Ranked.hit`)."""

    level: Level
    fused: list[tuple[str, float]]
    dense: dict[str, tuple[int, float]]  # id -> (rank, cosine similarity)
    lexical: dict[str, tuple[int, float]] = field(default_factory=dict)  # id -> (rank, BM25)
    also: list[list[tuple[str, float]]] = field(default_factory=list)
    degraded: bool = False

    def hit(self, row: Row, fused: float) -> Hit:
        """The hit of one row of this ranking, with its branch ranks and scores."""
        d_rank, d_sim = self.dense.get(row["id"], (None, None))
        l_rank, l_score = self.lexical.get(row["id"], (None, None))
        hit = _hit(self.level, row, fused, d_rank, l_rank, l_score, similarity=d_sim)
        return hit.model_copy(update={"lexical_unavailable": True}) if self.degraded else hit


def candidate_depth(k: int, factor: int = DEPTH_FACTOR, floor: int = MIN_CANDIDATES) -> int:
    """How many candidates each branch fetches before fusion."""
    return max(factor * k, floor)


class SearchStore(DenseSearch, LexicalSearch, Protocol):
    """What the searcher reads: the two search primitives and the rows of their hits."""


class HybridSearcher:
    """Model-free retrieval over one `Storage` with one Embedder; safe to share across threads."""

    def __init__(
        self,
        store: SearchStore,
        embedder: Embedder,
        rrf_k: int = DEFAULT_RRF_K,
        *,
        depth_factor: int = DEPTH_FACTOR,
        min_candidates: int = MIN_CANDIDATES,
        threads: int = SEARCH_THREADS,
        max_k: int = MAX_K,
        max_query_chars: int = MAX_QUERY_CHARS,
    ) -> None:
        for name, value in (
            ("rrf_k", rrf_k),
            ("depth_factor", depth_factor),
            ("min_candidates", min_candidates),
            ("threads", threads),
        ):
            if value < 1:
                raise UserInputError(f"{name} must be >= 1, got {value}")
        self.store = store
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.depth_factor = depth_factor
        self.min_candidates = min_candidates
        self.max_k, self.max_query_chars = max_k, max_query_chars  # for `search`
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hymem-lexical")

    @classmethod
    def from_config(
        cls, store: SearchStore, embedder: Embedder, config: MemoryConfig
    ) -> HybridSearcher:
        """The searcher a `Memory` with `config` uses: its fusion, depth, threads and limits."""
        return cls(
            store,
            embedder,
            rrf_k=config.rrf_k,
            depth_factor=config.search_depth_factor,
            min_candidates=config.search_min_candidates,
            threads=config.search_threads,
            max_k=config.max_k,
            max_query_chars=config.max_query_chars,
        )

    def close(self) -> None:
        """Stop the lexical worker threads (waiting for a search in flight); idempotent."""
        self._pool.shutdown(wait=True)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        k: int = 10,
        level: Level | str = Level.SUMMARY,
        mode: SearchMode = "hybrid",
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        include_inactive: bool = False,
        as_of: datetime | str | None = None,
        filters: Mapping[str, Any] | Filter | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[Hit]:
        """Top-k hits of `user_id` for `query`, best first; [] for an unknown user. The
        arguments are `Memory.search`'s, checked the same way (`search_scope`); `filters`
        keeps hits whose metadata matches, in both branches."""
        scope = search_scope(
            query,
            user_id=user_id,
            k=k,
            level=level,
            mode=mode,
            since=since,
            until=until,
            include_inactive=include_inactive,
            as_of=as_of,
            filters=filters,
            agent_id=agent_id,
            run_id=run_id,
            max_k=self.max_k,
            max_query_chars=self.max_query_chars,
        )
        return self.find(query, scope)

    def find(self, query: str, scope: SearchScope, vector: Vector | None = None) -> list[Hit]:
        """The top `scope.k` hits for `query` within a checked `scope`, best first. `vector`
        is the query's embedding when the caller has it (the reader embeds once per ask);
        otherwise the query is embedded here, while the lexical branch runs."""
        depth = candidate_depth(scope.k, self.depth_factor, self.min_candidates)
        rows_scope = scope.rows()
        # The lexical branch (BM25 + one lookup of its candidates) runs in a worker thread
        # while this thread embeds the query and runs the dense search, so it adds almost
        # nothing to the latency: both Tantivy and LanceDB release the GIL.
        lex_future: Future[_LexicalResult] | None = None
        if scope.mode != "dense" and query.strip():
            lex_future = self._pool.submit(self._lexical_branch, rows_scope, query, depth)
        dense_rows: list[Row] = []
        try:
            if scope.mode != "lexical":
                if vector is None:
                    vector = self.embedder.embed([query])[0]
                dense_rows = self.store.dense_rows(rows_scope, vector, depth)
        except BaseException:
            if lex_future is not None:
                lex_future.cancel()
            raise
        no_lexical: _LexicalResult = ([], {}, False)
        lexical, rows, degraded = lex_future.result() if lex_future is not None else no_lexical
        rows.update((r["id"], r) for r in dense_rows)
        hits = self._fuse(scope, dense_rows, lexical, rows)
        if degraded:
            hits = [h.model_copy(update={"lexical_unavailable": True}) for h in hits]
        return hits

    def rank(
        self,
        query: str,
        scope: SearchScope,
        vector: Vector,
        *,
        also: Sequence[Vector] = (),
        also_k: int = 0,
    ) -> Ranked:
        """`find`'s ranking as ids, no row read: the fused list holds every candidate (an id
        the lexical index still holds but the table lost is dropped only when its row is
        read). `also`: further vectors ranked by the same dense scan, `also_k` deep each (the
        light path's aspect)."""
        depth = candidate_depth(scope.k, self.depth_factor, self.min_candidates)
        rows_scope = scope.rows()
        lex_future: Future[tuple[list[tuple[str, float]], bool]] | None = None
        if scope.mode != "dense" and query.strip():
            lex_future = self._pool.submit(self._lexical_ids, rows_scope, query, depth)
        try:
            vectors = [vector, *also] if scope.mode != "lexical" else list(also)
            deep = max(depth, also_k) if also else depth
            found = self.store.dense_search_many(rows_scope, vectors, deep) if vectors else []
        except BaseException:
            if lex_future is not None:
                lex_future.cancel()
            raise
        lexical, degraded = lex_future.result() if lex_future is not None else ([], False)
        dense = found[0][:depth] if scope.mode != "lexical" else []
        rest = found[1:] if scope.mode != "lexical" else found
        dense_ids, lex_ids = [i for i, _ in dense], [i for i, _ in lexical]
        return Ranked(
            level=scope.level,
            fused=reciprocal_rank_fusion([dense_ids, lex_ids], k=self.rrf_k),
            dense={i: (n, sim) for n, (i, sim) in enumerate(dense, start=1)},
            lexical={i: (n, score) for n, (i, score) in enumerate(lexical, start=1)},
            also=[ranking[:also_k] for ranking in rest],
            degraded=degraded,
        )

    def rows(self, scope: SearchScope, ids: Sequence[str]) -> dict[str, Row]:
        """The hit rows of `ids` at the scope's level (ids the store lacks, or holds retired
        since they were ranked, are left out)."""
        rows_scope = scope.rows()
        return _admitted(rows_scope, self.store.hydrate(scope.user_id, scope.level, ids))

    def _lexical_ids(
        self, scope: RowScope, query: str, depth: int
    ) -> tuple[list[tuple[str, float]], bool]:
        lexical = self.store.lexical_search(scope, query, depth)
        return lexical, self.store.lexical_unavailable

    def _lexical_branch(self, scope: RowScope, query: str, depth: int) -> _LexicalResult:
        lexical = self.store.lexical_search(scope, query, depth)
        degraded = self.store.lexical_unavailable
        found = self.store.hydrate(scope.user_id, scope.level, [i for i, _ in lexical])
        rows = _admitted(scope, found)
        retired = found.keys() - rows.keys()
        return [(i, s) for i, s in lexical if i not in retired], rows, degraded

    def _fuse(
        self,
        scope: SearchScope,
        dense_rows: list[Row],
        lexical: list[tuple[str, float]],
        rows: dict[str, Row],
    ) -> list[Hit]:
        """The top k of both rankings fused by RRF (a branch the mode skipped is empty and
        adds nothing), each hit keeping its per-branch ranks and scores. The two branches
        read the store at two moments, so each memory is served once, at the version the
        newest read holds active (`one_version_each`), and a row the scope no longer admits
        (its status moved between the dense scan and the read of its row) is not served. An
        id with no row (in Tantivy but no longer in LanceDB) is logged and never served."""
        level, k, rows_scope = scope.level, scope.k, scope.rows()
        dense_ids = [r["id"] for r in dense_rows]
        lex_ids = [i for i, _ in lexical]
        dense_rank = {i: n for n, i in enumerate(dense_ids, start=1)}
        lex_rank = {i: n for n, i in enumerate(lex_ids, start=1)}
        lex_score = dict(lexical)
        admitted = _admitted(rows_scope, rows)
        fused = [
            (i, score)
            for i, score in reciprocal_rank_fusion([dense_ids, lex_ids], k=self.rrf_k)
            if i in admitted or i not in rows
        ]
        ranking, current = one_version_each(
            rows_scope, fused, admitted, lambda ids: self.rows(scope, ids)
        )
        hits: list[Hit] = []
        for item_id, score in ranking:
            row = current.get(item_id)
            if row is None:
                log.warning("hybrid.orphan_lexical_hit", id=item_id, level=level.value)
                continue
            ranks = (dense_rank.get(item_id), lex_rank.get(item_id))
            hits.append(_hit(level, row, score, *ranks, lex_score.get(item_id)))
            if len(hits) == k:
                break
        return hits


def _admitted(scope: RowScope, rows: dict[str, Row]) -> dict[str, Row]:
    """The summary rows `scope` admits by their stored status. A version change commits
    LanceDB before Tantivy, so for a moment Tantivy still matches the version it retired:
    that one is not served beside its successor."""
    if scope.level is not Level.SUMMARY:
        return rows
    return {i: r for i, r in rows.items() if scope.admits(r["status"], r.get("valid_to"))}


def _hit(
    level: Level,
    row: Row,
    fused: float,
    d_rank: int | None,
    l_rank: int | None,
    l_score: float | None,
    *,
    similarity: float | None = None,
) -> Hit:
    distance = row.get("_distance")
    if similarity is None and distance is not None and d_rank is not None:
        similarity = 1.0 - float(distance)
    return Hit(
        level=level,
        id=row["id"],
        user_id=row["user_id"],
        text=row["text"],
        segment_id=row["segment_id"] if level is Level.SUMMARY else row["id"],
        turn_ids=list(row.get("turn_ids" if level is Level.SEGMENT else "source_turn_ids") or []),
        attribution=row.get("attribution") if level is Level.SUMMARY else None,
        time_start=row.get("time_start"),
        time_end=row.get("time_end"),
        status=SummaryStatus(row["status"]) if level is Level.SUMMARY else None,
        metadata=row.get("metadata") or {},
        dense_score=similarity,
        lexical_score=l_score,
        dense_rank=d_rank,
        lexical_rank=l_rank,
        fused_score=fused,
        memory_id=row.get("memory_id") if level is Level.SUMMARY else None,
        valid_from=row.get("valid_from") if level is Level.SUMMARY else None,
        valid_to=row.get("valid_to") if level is Level.SUMMARY else None,
    )


__all__ = [
    "DEPTH_FACTOR",
    "MIN_CANDIDATES",
    "SEARCH_THREADS",
    "HybridSearcher",
    "Ranked",
    "SearchMode",
    "SearchScope",
    "Vector",
    "candidate_depth",
]
