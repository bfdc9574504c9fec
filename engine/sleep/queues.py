"""Update queues for sleep-time consolidation (LightMem §3.3), as a pure numpy function.

For every active summary e_i the queue Q(e_i) holds the summaries that may update it: the top-k
most similar entries that come *later* in temporal order, keeping at most n of them whose cosine
similarity reaches a floor. Only later entries may update earlier ones (t_j >= t_i); entries with
equal timestamps are ordered by a caller-given rank (creation order), so each pair of summaries is
considered exactly once and always in the same direction.

Rows are permuted into temporal order, so the candidates of the entry at position p are exactly
the positions > p. With exact similarities, "top-k, then keep n above the floor" equals "the
min(k, n) best above the floor"; k is kept as the paper's parameter and bounds the candidate pool.
Two ways to find them, both blockwise so memory stays bounded (about `block_bytes`):

- "exact" (`hymem.sleep.scan`): the upper triangle of the similarity matrix, N²/2 similarities:
  cheap for a few thousand summaries, minutes at 100k (425 s on 2 cores);
- "ivf" (`hymem.sleep.ivf`): only pairs sharing a k-means cell of one of a few partitions,
  about N^1.5 similarities (100k in seconds), finding nearly all the exact entries (about 0.98 on
  clustered synthetic data; `queue_agreement` measures it on a sample). Similarities, floor,
  direction and order are the exact ones; a missed neighbour only leaves room for the next best.

"auto" (the consolidator's) scans exactly below `EXACT_BELOW` items and approximately above, so
small users keep exact queues and no user's sleep grows quadratically.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hymem.sleep.ivf import DEFAULT_NPROBE, DEFAULT_TABLES, scan_ivf
from hymem.sleep.scan import Scan, ScanParts, scan_upper_triangle

DEFAULT_BLOCK_BYTES = 64 * 1024 * 1024
EXACT_BELOW = 20_000  # "auto" scans exactly below this many items (a few seconds at most)
METHODS = ("auto", "exact", "ivf")


@dataclass(frozen=True)
class QueueCost:
    """What building the queues cost, reported by `hymem sleep`."""

    items: int
    queues: int  # non-empty queues
    entries: int  # queue entries kept in all
    similarities: int  # similarity values computed (exact: upper triangle plus block overhang)
    blocks: int
    block_bytes: int  # peak bytes of one similarity block
    seconds: float
    method: str = "exact"  # "exact" or "ivf" (the one that ran)


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

    def queue_indices(self, i: int) -> np.ndarray:
        """Item i's queue as an index array (no Python tuples: cheap on large samples)."""
        return self.indices[self.indptr[i] : self.indptr[i + 1]]

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
    method: str = "auto",
    exact_below: int = EXACT_BELOW,
    nprobe: int = DEFAULT_NPROBE,
    tables: int = DEFAULT_TABLES,
    seed: int = 0,
) -> UpdateQueues:
    """Build every item's update queue (see the module docstring).

    vectors: (N, d) embeddings (normalised here); ranks: each item's unique temporal position,
    e.g. from `temporal_ranks`. method: "exact", "ivf" or "auto" (exact below `exact_below`
    items, where it is cheap and needs no sample to be trusted). nprobe, tables and seed steer
    "ivf" (more probes or tables: closer to exact, dearer; same seed: same queues). Returns
    queues indexed like `vectors`; `cost.method` says which scan ran.
    """
    if min(top_k, keep_n, nprobe, tables) < 1:
        raise ValueError("top_k, keep_n, nprobe and tables must be >= 1")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    started = time.perf_counter()
    v = _normalise(vectors)
    n = v.shape[0]
    order = _temporal_order(ranks, n)  # order[p] = item at temporal position p
    if method == "auto":
        method = "exact" if n < exact_below else "ivf"
    eff = min(top_k, keep_n)
    if method == "exact":
        scan = scan_upper_triangle(v[order], eff, floor, block_bytes)
    else:
        scan = scan_ivf(v[order], eff, floor, block_bytes, nprobe=nprobe, tables=tables, seed=seed)
    indptr, cands, sims = _compressed_rows(scan, order)
    cost = QueueCost(
        items=n,
        queues=int(np.count_nonzero(np.diff(indptr))),
        entries=len(cands),
        similarities=scan.computed,
        blocks=scan.blocks,
        block_bytes=scan.peak_bytes,
        seconds=time.perf_counter() - started,
        method=method,
    )
    return UpdateQueues(indptr=indptr, indices=cands, sims=sims, cost=cost)


def _compressed_rows(scan: Scan, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A scan's entries back in the caller's indexing, grouped by item, best first, ties: the
    older candidate first."""
    items, cands = order[scan.rows], order[scan.cols]
    sort = np.lexsort((scan.cols, -scan.sims, items))
    items, cands, sims = items[sort], cands[sort], scan.sims[sort]
    indptr = np.zeros(len(order) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(np.bincount(items, minlength=len(order)))
    return indptr, cands.astype(np.int64), sims.astype(np.float32)


def _temporal_order(ranks: np.ndarray, n: int) -> np.ndarray:
    """The items in temporal order, after checking `ranks` is a permutation of 0..n-1."""
    ranks = np.asarray(ranks, dtype=np.int64)
    if ranks.shape != (n,) or (n and not np.array_equal(np.sort(ranks), np.arange(n))):
        raise ValueError("ranks must be a permutation of 0..N-1")
    return np.argsort(ranks, kind="stable")


def queue_agreement(
    queues: UpdateQueues,
    vectors: np.ndarray,
    ranks: np.ndarray,
    *,
    top_k: int = 20,
    keep_n: int = 10,
    floor: float = 0.6,
    sample: int = 500,
    seed: int = 0,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> float:
    """Fraction of the exact queues' entries, over a seeded sample of items, that `queues` also
    holds (1.0 when the sample's exact queues are empty).

    Why: approximate queues are checked against the exact ones without the quadratic build; the
    exact queue of one item costs one row against all later items, so a sample costs sample × N.
    """
    v = _normalise(vectors)
    n = v.shape[0]
    order = _temporal_order(ranks, n)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    picked = np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False)
    rows = np.sort(position[picked])  # temporal positions of the sampled items
    vs = v[order]
    step = max(1, block_bytes // max(1, 4 * n))
    parts = ScanParts()
    columns = np.arange(n, dtype=np.int64)
    for a in range(0, len(rows), step):
        r = rows[a : a + step]
        sims = vs[r] @ vs.T
        parts.add(sims, r, columns, min(top_k, keep_n), floor, r + 1)  # only later items
    exact = parts.done()
    if not len(exact.rows):
        return 1.0
    found = sum(
        int(np.isin(order[exact.cols[exact.rows == p]], queues.queue_indices(order[p])).sum())
        for p in rows
    )
    return found / len(exact.rows)
