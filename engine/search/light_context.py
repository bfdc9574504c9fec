"""The light path's context, read through a `VectorSearcher` (`hymem.search.light`).

`light_context` is the one call the reader makes for it. It ranks the question's candidates as
ids (the hybrid pool with, in the same dense scan, the likely aspect; and the segment search),
reads rows once for the hybrid pool, finds the anchors in their texts, reads the aspect's rows
(ranking a different aspect first when the anchors found are not the likely ones), and hands
typed `Candidate`s to the pure `light_ranking`. Each memory is kept once
(`hymem.search.versions`: rows came from several reads, and a memory corrected between two of
them is read again), and a `Hit` is built only for what `fill_tokens` reads of the ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from hymem.core.types import Hit, Level
from hymem.indexes.protocol import Row
from hymem.search.anchors import capitalised, find_anchors
from hymem.search.hybrid import Ranked
from hymem.search.light import (
    LIGHT_ASPECT,
    LIGHT_POOL,
    LIGHT_SEGMENTS,
    Candidate,
    fill_tokens,
    light_ranking,
)
from hymem.search.scope import SearchScope
from hymem.search.searcher import QueryVectors, VectorSearcher
from hymem.search.versions import one_version_each


def light_context(
    searcher: VectorSearcher,
    vectors: QueryVectors,
    query: str,
    scope: SearchScope,
    tokens: int,
    count: Callable[[str], int],
) -> list[Hit]:
    """The light context of `query` within `scope`: summaries that each add a source turn,
    by the fused light rank, until `tokens` (as `count` counts them) are filled."""
    return fill_tokens(_ranked_hits(searcher, vectors, query, scope), tokens, count)


def _ranked_hits(
    searcher: VectorSearcher, vectors: QueryVectors, query: str, scope: SearchScope
) -> Iterator[tuple[Hit, float]]:
    """The fused light rank, lazily as hits (module docstring)."""
    likely = capitalised(query)
    vectors.embed_all([query, likely.aspect])  # one batch: the likely aspect
    pool_scope = scope.sized(LIGHT_POOL, Level.SUMMARY)
    vector = vectors[query]
    ranked = searcher.rank(
        query, pool_scope, vector, also=[vectors[likely.aspect]], also_k=LIGHT_ASPECT
    )
    segments = searcher.rank(query, scope.sized(LIGHT_SEGMENTS, Level.SEGMENT), vector)
    rows = searcher.rows(pool_scope, [i for i, _ in ranked.fused[:LIGHT_POOL]])
    hybrid = _with_rows(searcher, [i for i, _ in ranked.fused], LIGHT_POOL, rows, pool_scope)
    pool = [_candidate(rows[i]) for i in hybrid]
    anchors = find_anchors(query, [c.text for c in pool])
    pairs: list[tuple[str, float]] = []
    if anchors.names:  # no anchor: the aspect is the question, whose ranking hybrid holds
        same = anchors.aspect == likely.aspect
        pairs = ranked.also[0] if same else _dense_ids(searcher, vectors, scope, anchors.aspect)
        rows.update(searcher.rows(pool_scope, [i for i, _ in pairs if i not in rows]))
    aspect = [_candidate(rows[i]) for i, _ in pairs if i in rows]
    fused = light_ranking(pool, [i for i, _ in segments.fused[:LIGHT_SEGMENTS]], aspect, anchors)
    # rows came from several reads: a memory corrected between two of them is read again
    fused, rows = one_version_each(
        pool_scope.rows(), fused, rows, lambda ids: searcher.rows(pool_scope, ids)
    )
    in_pool = set(hybrid)  # a hit outside the hybrid pool shows its aspect rank
    by_aspect = Ranked(Level.SUMMARY, [], {i: (n, s) for n, (i, s) in enumerate(pairs, 1)})
    for item, score in fused:
        yield (ranked if item in in_pool else by_aspect).hit(rows[item], score), score


def _candidate(row: Row) -> Candidate:
    """A summary row as the light ranking reads it."""
    return Candidate(id=row["id"], text=row["text"], segment_id=row["segment_id"])


def _with_rows(
    searcher: VectorSearcher, ids: list[str], n: int, rows: dict[str, Row], scope: SearchScope
) -> list[str]:
    """The first `n` of `ids` the store holds rows for, reading further rows only when an id
    had none (a lexical hit the table no longer holds is never served)."""
    kept = [i for i in ids[:n] if i in rows]
    at = n
    while len(kept) < n and at < len(ids):
        more = ids[at : at + n - len(kept)]
        rows.update(searcher.rows(scope, more))
        kept += [i for i in more if i in rows]
        at += len(more)
    return kept


def _dense_ids(
    searcher: VectorSearcher, vectors: QueryVectors, scope: SearchScope, query: str
) -> list[tuple[str, float]]:
    """The top `LIGHT_ASPECT` summaries by the query's vector alone, as (id, similarity)."""
    vectors.embed_all([query])
    dense_scope = replace(scope.sized(LIGHT_ASPECT, Level.SUMMARY), mode="dense")
    dense = searcher.rank(query, dense_scope, vectors[query]).dense
    return [(i, sim) for i, (_, sim) in dense.items()][:LIGHT_ASPECT]  # dicts keep rank order


__all__ = ["light_context"]
