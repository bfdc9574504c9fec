"""Scan primitives shared by the exact and the approximate update-queue builders.

Both work on unit vectors permuted into temporal order, so "later" means "larger position" and a
candidate's position doubles as its age for the tie-break (the older candidate first). Results
are (row, column, similarity) triples in those positions, gathered in a `Scan`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scan:
    """The kept (row, column, similarity) entries, in temporal positions, and the scan's cost."""

    rows: np.ndarray
    cols: np.ndarray
    sims: np.ndarray
    computed: int
    blocks: int
    peak_bytes: int


class ScanParts:
    """Accumulates the pieces of a scan, block by block."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.sims: list[np.ndarray] = []
        self.computed = self.blocks = self.peak = 0

    def add(
        self,
        block: np.ndarray,
        rows: np.ndarray,
        cols: np.ndarray,
        eff: int,
        floor: float,
        first_col: np.ndarray | None = None,
    ) -> None:
        """Keep the best `eff` entries >= floor of each row of `block` (from `first_col[row]`
        on), whose rows and columns stand for positions `rows` and `cols` (columns ascending, so
        ties favour the older)."""
        self.computed += block.size
        self.blocks += 1
        self.peak = max(self.peak, block.nbytes)
        r, c, s = best_per_row(block, eff, floor, first_col)
        self.rows.append(rows[r])
        self.cols.append(cols[c])
        self.sims.append(s)

    def extend(self, other: Scan) -> None:
        self.rows.append(other.rows)
        self.cols.append(other.cols)
        self.sims.append(other.sims)
        self.computed += other.computed
        self.blocks += other.blocks
        self.peak = max(self.peak, other.peak_bytes)

    def done(self) -> Scan:
        def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
            return np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype)

        return Scan(
            rows=cat(self.rows, np.int64),
            cols=cat(self.cols, np.int64),
            sims=cat(self.sims, np.float32),
            computed=self.computed,
            blocks=self.blocks,
            peak_bytes=self.peak,
        )


def scan_upper_triangle(vs: np.ndarray, eff: int, floor: float, block_bytes: int) -> Scan:
    """The best `eff` later entries above `floor` for each row of time-ordered unit vectors
    `vs`, computing only the upper triangle, a block of about `block_bytes` at a time."""
    n = vs.shape[0]
    rows_per_block = max(1, min(n, block_bytes // max(1, 4 * n))) if n else 1
    parts = ScanParts()
    positions = np.arange(n, dtype=np.int64)
    for a in range(0, max(n - 1, 0), rows_per_block):
        b = min(n, a + rows_per_block)
        sims = vs[a:b] @ vs[a:].T  # rows: positions a..b-1; columns: positions a..n-1
        # a candidate must come strictly later: row i's candidates start at column i + 1
        parts.add(sims, positions[a:b], positions[a:], eff, floor, np.arange(1, b - a + 1))
    return parts.done()


def best_per_row(
    sims: np.ndarray, eff: int, floor: float, first_col: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, similarity) of the best `eff` entries >= floor in each row of a block, only
    from column `first_col[row]` on when given (the candidates later than the row's item); ties
    go to the smaller column (the older candidate), also at the cut. May overwrite `sims`."""
    rows, width = sims.shape
    above = sims >= floor
    if int(np.count_nonzero(above)) > rows * eff * 8 and eff < width:
        # dense case (a low floor): first narrow each row to the entries reaching its eff-th
        # best value among its candidates, so about eff per row (more on ties) are sorted below
        if first_col is not None:
            sims[np.arange(width)[None, :] < first_col[:, None]] = -np.inf
            above &= sims >= floor
            first_col = None
        kth = -np.partition(-sims, eff - 1, axis=1)[:, eff - 1]
        above &= sims >= kth[:, None]
    r, c = np.divmod(np.flatnonzero(above), width)  # much faster than a 2-D np.nonzero
    if first_col is not None:
        later = c >= first_col[r]
        r, c = r[later], c[later]
    s = sims[r, c]
    srt = np.lexsort((c, -s, r))
    r, c, s = r[srt], c[srt], s[srt]
    keep = (np.arange(len(r)) - np.searchsorted(r, r)) < eff
    return r[keep], c[keep], s[keep]
