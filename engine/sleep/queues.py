"""Update queues for sleep-time consolidation (LightMem §3.3), as a pure numpy function.

For every active summary e_i the queue Q(e_i) holds the summaries that may update it: the top-k
most similar entries that come *later* in temporal order, keeping at most n of them whose cosine
similarity reaches a floor. Only later entries may update earlier ones (t_j >= t_i); entries with
equal timestamps are ordered by a caller-given rank (creation order), so each pair of summaries is
considered exactly once and always in the same direction.

Because candidates of the entry at temporal position p are exactly the positions > p, the rows
are permuted into temporal order and only the upper triangle of the similarity matrix is computed,
a block of rows at a time, so memory stays bounded (about `block_bytes`) even at 100k summaries.
With exact similarities, "top-k, then keep n above the floor" equals "the min(k, n) best above the
floor"; k is kept as the paper's parameter and bounds the candidate pool.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hymem.sleep.scan import scan_upper_triangle

DEFAULT_BLOCK_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class QueueCost:
    """What building the queues cost, reported by `hymem sleep`."""

    items: int
    queues: int  # non-empty queues
    entries: int  # queue entries kept in all
    similarities: int  # similarity values computed (upper triangle plus block overhang)
    blocks: int
    block_bytes: int  # peak bytes of one similarity block
    seconds: float


@dataclass(frozen=True)
class UpdateQueues:
    """Queues in compressed-row form, indexed like the input vectors.

    The queue of item i is `indices[indptr[i]:indptr[i+1]]` with similarities `sims[...]`,
    most similar first (ties: the older candidate first).
    """

    indptr: np.ndarray
    indices: np.ndarray
    sims: np.ndarray
    cost: QueueCost

    def queue(self, i: int) -> list[tuple[int, float]]:
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        return [
            (int(j), float(s)) for j, s in zip(self.indices[lo:hi], self.sims[lo:hi], strict=True)
        ]

    def __len__(self) -> int:
        return len(self.indptr) - 1


def temporal_ranks(keys: Sequence[tuple[object, ...]]) -> np.ndarray:
    """Position of each item in temporal order; keys must be mutually comparable and unique."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(keys), dtype=np.int64)
    return ranks


def _normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim != 2:
        raise ValueError(f"vectors must be 2-D, got shape {v.shape}")
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(v / norms)


def build_update_queues(
    vectors: np.ndarray,
    ranks: np.ndarray,
    *,
    top_k: int = 20,
    keep_n: int = 10,
    floor: float = 0.6,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> UpdateQueues:
    """Build every item's update queue (see the module docstring).

    vectors: (N, d) embeddings (normalised here); ranks: each item's unique temporal position,
    e.g. from `temporal_ranks`. Returns queues indexed like `vectors`.
    """
    if top_k < 1 or keep_n < 1:
        raise ValueError("top_k and keep_n must be >= 1")
    started = time.perf_counter()
    v = _normalise(vectors)
    n = v.shape[0]
    order = _temporal_order(ranks, n)  # order[p] = item at temporal position p
    scan = scan_upper_triangle(v[order], min(top_k, keep_n), floor, block_bytes)
    # back to the caller's indexing, grouped by item, best first, ties: older candidate first
    items, cands = order[scan.rows], order[scan.cols]
    sort = np.lexsort((scan.cols, -scan.sims, items))
    items, cands, sims = items[sort], cands[sort], scan.sims[sort]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, items + 1, 1)
    indptr = np.cumsum(indptr)
    cost = QueueCost(
        items=n,
        queues=int(np.count_nonzero(np.diff(indptr))),
        entries=len(cands),
        similarities=scan.computed,
        blocks=scan.blocks,
        block_bytes=scan.peak_bytes,
        seconds=time.perf_counter() - started,
    )
    return UpdateQueues(
        indptr=indptr, indices=cands.astype(np.int64), sims=sims.astype(np.float32), cost=cost
    )


def _temporal_order(ranks: np.ndarray, n: int) -> np.ndarray:
    """The items in temporal order, after checking `ranks` is a permutation of 0..n-1."""
    ranks = np.asarray(ranks, dtype=np.int64)
    if ranks.shape != (n,) or (n and not np.array_equal(np.sort(ranks), np.arange(n))):
        raise ValueError("ranks must be a permutation of 0..N-1")
    return np.argsort(ranks, kind="stable")
