"""Approximate update-queue scan: an inverted file (IVF) over spherical k-means cells.

Why: the exact scan compares every pair of a user's summaries (N²/2 similarities: 100k summaries
took 425 s on 2 cores). Summaries similar enough to update one another fall in the same or
nearby k-means cells, so each item is compared only with the members of its `nprobe` nearest
cells: with C ≈ sqrt(N) cells that is about N·nprobe·N/C = nprobe·N^1.5 similarities, plus N·C to
place the items.

How, on unit vectors in temporal order (see `hymem.sleep.scan`):
- cells: a few Lloyd iterations of spherical k-means on a seeded sample, then every item goes to
  its nearest centroid; the same seed gives the same cells, hence the same queues;
- probes: every item also lists its `nprobe` nearest centroids; per cell, one matrix product of
  the items probing it against the cell's later members finds each item's best in that cell,
  with exact similarities and the exact scan's floor, order and tie-break;
- tables: a near pair split by one partition's boundary is seldom split by another, so a few
  independent partitions (seeds) with few probes each beat one partition with many probes: on
  clustered synthetic data at 100k, 3 tables × 4 probes find about 0.98 of the exact neighbours
  where 1 table × 16 probes finds 0.93 for more similarities. Pairs found twice count once;
- tail: the latest items have so few later items that comparing with all of them costs no more
  than probing, and probing is weakest there (their best later items may lie far away), so they
  are scanned exactly.
"""

from __future__ import annotations

import numpy as np
from hymem.sleep.scan import Scan, ScanParts, scan_upper_triangle

DEFAULT_NPROBE = 4
DEFAULT_TABLES = 3
CELLS_PER_SQRT_N = 1.0
KMEANS_ITERS = 6
SAMPLE_PER_CELL = 48  # k-means sample size per centroid (fewer cost recall on clustered data)


def scan_ivf(
    vs: np.ndarray,
    eff: int,
    floor: float,
    block_bytes: int,
    *,
    nprobe: int = DEFAULT_NPROBE,
    tables: int = DEFAULT_TABLES,
    seed: int = 0,
) -> Scan:
    """The best `eff` later entries above `floor` for each row of time-ordered unit vectors `vs`,
    looking only in each row's `nprobe` nearest cells of `tables` partitions (module docstring)."""
    n = vs.shape[0]
    n_cells = max(1, min(n, round(CELLS_PER_SQRT_N * float(np.sqrt(n)))))
    nprobe = max(1, min(nprobe, n_cells))
    # items this late have at most `budget` later items: as cheap to compare with all of them
    budget = min(n, tables * nprobe * -(-n // n_cells))
    tail = n - budget
    parts = ScanParts()
    parts.extend(_shift(scan_upper_triangle(vs[tail:], eff, floor, block_bytes), tail))
    for t in range(tables if tail > 0 else 0):
        rng = np.random.default_rng([seed, t])
        _scan_table(
            vs, tail, spherical_kmeans(vs, n_cells, rng), nprobe, eff, floor, block_bytes, parts
        )
    return _best_of_probes(parts.done(), eff)


def _scan_table(
    vs: np.ndarray,
    tail: int,
    centroids: np.ndarray,
    nprobe: int,
    eff: int,
    floor: float,
    block_bytes: int,
    parts: ScanParts,
) -> None:
    """One partition's pass: every item before `tail` against its probed cells' later members."""
    k = len(centroids)
    cell, probes = assign(vs, centroids, nprobe, block_bytes)
    members = _inverted(cell[:, None], k)  # each cell's items
    askers = _inverted(probes[:tail], k)  # the items probing each cell
    for cands, queries in zip(members, askers, strict=True):
        if len(cands) and len(queries):
            asking = queries[queries < cands[-1]]  # the others have no later member here
            _scan_cell(vs, asking, cands, eff, floor, block_bytes, parts)


def spherical_kmeans(vs: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k unit centroids from a few Lloyd iterations (cosine) on a sample of `vs`."""
    n = vs.shape[0]
    sample = vs[np.sort(rng.choice(n, size=min(n, k * SAMPLE_PER_CELL), replace=False))]
    centroids = sample[rng.choice(len(sample), size=k, replace=False)].copy()
    for _ in range(KMEANS_ITERS):
        labels = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        order = np.argsort(labels, kind="stable")
        used, starts = np.unique(labels[order], return_index=True)
        sums[used] = np.add.reduceat(sample[order], starts, axis=0)
        empty = np.setdiff1d(np.arange(k), used)
        sums[empty] = sample[rng.choice(len(sample), size=len(empty), replace=False)]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        centroids = sums / norms
    return np.ascontiguousarray(centroids, dtype=np.float32)


def assign(
    vs: np.ndarray, centroids: np.ndarray, nprobe: int, block_bytes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each item's nearest centroid and its `nprobe` nearest ones (the nearest among them)."""
    n, k = vs.shape[0], centroids.shape[0]
    probes = np.empty((n, nprobe), dtype=np.int64)
    step = max(1, block_bytes // max(1, 4 * k))
    for a in range(0, n, step):
        sims = vs[a : a + step] @ centroids.T
        rows = np.arange(len(sims))
        for p in range(nprobe):  # a few argmax passes beat argpartition for a few probes
            best = np.argmax(sims, axis=1)
            probes[a : a + step, p] = best
            sims[rows, best] = -np.inf
    cell = probes[:, 0].copy()
    return cell, probes


def _inverted(lists: np.ndarray, k: int) -> list[np.ndarray]:
    """For each of k cells, the rows of `lists` (N, m) that name it, ascending (so in temporal
    order)."""
    flat = lists.reshape(-1)
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(k + 1))
    rows = order // lists.shape[1]
    return [rows[bounds[c] : bounds[c + 1]] for c in range(k)]


def _best_of_probes(scan: Scan, eff: int) -> Scan:
    """Each row's best `eff` entries over every cell it probed in every table (each cell kept up
    to eff), a pair found by several tables counted once."""
    pair = np.lexsort((scan.cols, scan.rows))
    rows, cols = scan.rows[pair], scan.cols[pair]
    first = np.ones(len(pair), dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    unique = pair[first]
    srt = unique[np.lexsort((scan.cols[unique], -scan.sims[unique], scan.rows[unique]))]
    rows = scan.rows[srt]
    keep = srt[(np.arange(len(rows)) - np.searchsorted(rows, rows)) < eff]
    return Scan(
        rows=scan.rows[keep],
        cols=scan.cols[keep],
        sims=scan.sims[keep],
        computed=scan.computed,
        blocks=scan.blocks,
        peak_bytes=scan.peak_bytes,
    )


def _scan_cell(
    vs: np.ndarray,
    queries: np.ndarray,
    cands: np.ndarray,
    eff: int,
    floor: float,
    block_bytes: int,
    parts: ScanParts,
) -> None:
    """Compare ascending `queries` with ascending `cands`, keeping only later candidates."""
    if not len(cands):
        return
    step = max(1, block_bytes // (4 * len(cands)))
    cv = vs[cands]
    for a in range(0, len(queries), step):
        q = queries[a : a + step]
        sims = vs[q] @ cv.T
        parts.add(sims, q, cands, eff, floor, np.searchsorted(cands, q, side="right"))


def _shift(scan: Scan, offset: int) -> Scan:
    return Scan(
        rows=scan.rows + offset,
        cols=scan.cols + offset,
        sims=scan.sims,
        computed=scan.computed,
        blocks=scan.blocks,
        peak_bytes=scan.peak_bytes,
    )
