"""Reads of a loaded dense-cache entry: the rows of given ids, the filter mask of a scope, and
the exact top k of one or many query vectors (`hymem.indexes.dense.cache` holds the entries;
these functions read one under its lock)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
from hymem.core.filters import Filter
from hymem.core.time import micros
from hymem.core.types import SummaryStatus
from hymem.indexes.dense.cache import (
    STATUS_CODES,
    STATUS_NAMES,
    Entry,
    SummaryLink,
    unit_rows,
)
from hymem.indexes.filter_compile import mask as meta_mask
from hymem.indexes.protocol import TimeRange

GEMV_MAX = 3


# Scans outside the lock whose entry changed before their rows were read, before the next
# scan holds the lock throughout (writes are rare beside searches: one retry is the norm).
OPTIMISTIC_SCANS = 3


def hit_rows(
    entry: Entry, user_id: str, ids: Sequence[str], *, summary: bool
) -> dict[str, dict[str, Any]]:
    """The rows of `ids` the entry holds, with the columns LanceDB would return for a hit
    (`protocol.HIT_COLUMNS`); ids it does not hold are left out, as a lookup would. Times
    are converted in one numpy call per column (per row, they were a third of the time)."""
    with entry.lock:
        return _rows(entry, user_id, ids, summary=summary)


def _rows(
    entry: Entry, user_id: str, ids: Sequence[str], *, summary: bool
) -> dict[str, dict[str, Any]]:
    """`hit_rows` for a caller that holds entry.lock."""
    out: dict[str, dict[str, Any]] = {}
    n = entry.n
    found = [(item, at) for item in ids if (at := entry.pos.get(item)) is not None and at < n]
    if not found:
        return out
    at_rows = np.fromiter((at for _, at in found), dtype=np.int64, count=len(found))
    starts = _datetimes(entry.lo[at_rows], entry.has_start[at_rows])
    ends = _datetimes(entry.hi[at_rows], entry.has_end[at_rows])
    metas = entry.interner.metas
    for (item, at), start, end in zip(found, starts, ends, strict=True):
        row: dict[str, Any] = {
            "id": item,
            "user_id": user_id,
            "text": entry.text[at],
            "time_start": start,
            "time_end": end,
            "metadata": dict(metas[entry.meta_ids[at]]),
        }
        if summary:
            link: SummaryLink = entry.link[at]
            row["segment_id"] = link.segment_id
            row["source_turn_ids"] = list(link.source_turn_ids)
            row["attribution"] = link.attribution
            row["status"] = STATUS_NAMES[int(entry.status[at])]
            row["memory_id"] = link.memory_id or item
            row["valid_from"] = link.valid_from
            row["valid_to"] = link.valid_to
        else:
            row["turn_ids"] = list(entry.link[at] or [])
        out[item] = row
    return out


def top_k_rows(
    entry: Entry,
    user_id: str,
    vector: Sequence[float] | np.ndarray,
    k: int,
    statuses: Sequence[str] | None,
    time_range: TimeRange | None,
    filters: Filter | None = None,
    valid_at: datetime | None = None,
    *,
    summary: bool,
) -> tuple[list[tuple[str, float]], dict[str, dict[str, Any]]]:
    """`top_k` and the winners' rows, both from one state of the entry. Read apart, a commit
    between the scan and the read (a sleep retiring a version for its successor) left a
    search with the old version's row, now retired and so not served, and without the
    successor, which the scan never saw: the memory was missing from the results. The scan
    runs outside the lock as before; its rows are taken only if no upsert came between."""
    for attempt in range(OPTIMISTIC_SCANS + 1):
        locked = attempt == OPTIMISTIC_SCANS
        if locked:
            entry.lock.acquire()
        try:
            best, seen = _top_k(entry, vector, k, statuses, time_range, filters, valid_at, locked)
            ids = [i for i, _ in best]
            if locked:
                return best, _rows(entry, user_id, ids, summary=summary)
            with entry.lock:
                if entry.changes == seen:
                    return best, _rows(entry, user_id, ids, summary=summary)
        finally:
            if locked:
                entry.lock.release()
    raise AssertionError("unreachable: the last scan holds the lock")


def _datetimes(values: np.ndarray, present: np.ndarray) -> list[datetime | None]:
    """Naive UTC datetimes of microsecond values (None where absent)."""
    stamps = values.astype("datetime64[us]").tolist()
    return [s if ok else None for s, ok in zip(stamps, present.tolist(), strict=True)]


def filter_mask(
    entry: Entry,
    n: int,
    statuses: Sequence[str] | None,
    time_range: TimeRange | None,
    filters: Filter | None = None,
    valid_at: datetime | None = None,
) -> np.ndarray | None:
    """Rows [0, n) that pass the filters, with the SQL filters' semantics
    (`indexes.filters.time_overlap`: undated rows never match a bounded range; metadata:
    `Filter.matches`; statuses and validity: `RowScope.admits`); None = all. The caller
    holds entry.lock."""
    mask: np.ndarray | None = None
    if statuses is not None:
        codes = [STATUS_CODES[SummaryStatus(s).value] for s in statuses]
        if len(codes) == 1:  # the usual scope (active only): a third of np.isin's time
            mask = entry.status[:n] == codes[0]
        else:
            mask = np.isin(entry.status[:n], np.asarray(codes, dtype=np.int8))
        if valid_at is not None:
            ended = entry.status[:n] == STATUS_CODES[SummaryStatus.SUPERSEDED.value]
            mask |= ended & (entry.valid_to[:n] > micros(valid_at))
    if time_range is not None and (time_range[0] is not None or time_range[1] is not None):
        since, until = time_range
        ok = entry.dated[:n].copy()
        if since is not None:
            ok &= entry.hi[:n] >= micros(since)
        if until is not None:
            ok &= entry.lo[:n] <= micros(until)
        mask = ok if mask is None else mask & ok
    if filters is not None:
        ok = meta_mask(filters, entry.meta_ids[:n], entry.interner.metas)
        mask = ok if mask is None else mask & ok
    return mask


def top_k(
    entry: Entry,
    vector: Sequence[float] | np.ndarray,
    k: int,
    statuses: Sequence[str] | None,
    time_range: TimeRange | None,
    filters: Filter | None = None,
    valid_at: datetime | None = None,
) -> list[tuple[str, float]]:
    """(id, cosine distance) of the k nearest rows passing the filters, nearest first; ties in
    row order (the order rows were stored in)."""
    return _top_k(entry, vector, k, statuses, time_range, filters, valid_at, False)[0]


def _top_k(
    entry: Entry,
    vector: Sequence[float] | np.ndarray,
    k: int,
    statuses: Sequence[str] | None,
    time_range: TimeRange | None,
    filters: Filter | None,
    valid_at: datetime | None,
    locked: bool,
) -> tuple[list[tuple[str, float]], int]:
    """`top_k` and the entry's change count when its filters were read (`locked`: the caller
    holds entry.lock already)."""
    if not locked:
        entry.lock.acquire()
    try:  # a consistent snapshot: rows [0, n) are never rewritten by an append
        n, ids, mat, seen = entry.n, entry.ids, entry.mat, entry.changes
        mask = filter_mask(entry, n, statuses, time_range, filters, valid_at)
    finally:
        if not locked:
            entry.lock.release()
    return _nearest(ids, mat, n, mask, vector, k), seen


def _nearest(
    ids: list[str],
    mat: np.ndarray,
    n: int,
    mask: np.ndarray | None,
    vector: Sequence[float] | np.ndarray,
    k: int,
) -> list[tuple[str, float]]:
    if n == 0 or k <= 0:
        return []
    q = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    sims = mat[:n] @ (q / norm if norm else q)
    if mask is not None:
        sims = np.where(mask, sims, -np.inf)
        k = min(k, int(np.count_nonzero(mask)))
    if k <= 0:
        return []
    k = min(k, n)
    part = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
    order = part[np.lexsort((part, -sims[part]))]
    return [(ids[i], float(1.0 - sims[i])) for i in order]


def top_k_many(
    entry: Entry,
    vectors: Sequence[Sequence[float] | np.ndarray],
    k: int,
    statuses: Sequence[str] | None,
    time_range: TimeRange | None,
    filters: Filter | None = None,
    valid_at: datetime | None = None,
) -> list[list[tuple[str, float]]]:
    """`top_k` of each vector, from one matrix product (same order and ties)."""
    with entry.lock:
        n, ids, mat = entry.n, entry.ids, entry.mat
        mask = filter_mask(entry, n, statuses, time_range, filters, valid_at)
    if not len(vectors):
        return []
    if n == 0 or k <= 0:
        return [[] for _ in vectors]
    q = unit_rows(np.asarray(vectors, dtype=np.float32))
    # a few queries: one matrix-vector product each (at 10k rows two cost 0.7 ms, their
    # matrix product 1.9); past GEMV_MAX the matrix product wins (32: 2.8 against 11.9 ms)
    rows = list(q @ mat[:n].T) if len(q) > GEMV_MAX else [mat[:n] @ v for v in q]
    if mask is not None:
        rows = [np.where(mask, sims, -np.inf) for sims in rows]
        k = min(k, int(np.count_nonzero(mask)))
    if k <= 0:
        return [[] for _ in vectors]
    k = min(k, n)
    out = []
    for row in rows:
        part = np.argpartition(-row, k - 1)[:k] if k < n else np.arange(n)
        order = part[np.lexsort((part, -row[part]))]
        out.append([(ids[i], float(1.0 - row[i])) for i in order])
    return out


__all__ = ["filter_mask", "hit_rows", "top_k", "top_k_many", "top_k_rows"]
