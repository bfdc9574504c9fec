"""Reciprocal-rank fusion (pure).

RRF (Cormack, Clarke & Büttcher, SIGIR 2009) scores an item by sum_i w_i / (k + rank_i) over the
rankings it appears in, with 1-based ranks. Only ranks matter, so BM25 scores and cosine
similarities, which live on incomparable scales, fuse without calibration. The constant k = 60 is
the value the paper found robust across TREC runs: it damps the advantage of the very top ranks so
that an item ranked well by both retrievers beats one ranked first by only one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    k: int = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked id lists into one list of (id, score), best first.

    Duplicates inside one ranking count at their first (best) position only. Ties are broken by
    the best single rank the item reached in any list, then by id, so the output is
    deterministic for the same inputs.
    """
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings):
        raise ValueError(f"got {len(weights)} weights for {len(rankings)} rankings")
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            if rank < best_rank.get(item, rank + 1):
                best_rank[item] = rank
    return sorted(scores.items(), key=lambda kv: (-kv[1], best_rank[kv[0]], kv[0]))


__all__ = ["DEFAULT_RRF_K", "reciprocal_rank_fusion"]
