"""The in-memory twin's search primitives (pure over its tables): which records a `RowScope`
admits, and the exact cosine top k of one or many vectors among them. The store calls these
under its lock."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hymem.core.types import Level, SummaryStatus
from hymem.indexes.memory.tables import MemoryTables, hit_row, in_range
from hymem.indexes.protocol import Row, RowScope, Vector


def candidates(t: MemoryTables, scope: RowScope) -> list[str]:
    """Ids of the user's records at the scope's level that pass its status (and validity),
    time and metadata filters (the last by `Filter.matches`, the reference every store is
    tested against)."""
    level, filters = scope.level, scope.filters
    statuses = scope.statuses is not None and level is Level.SUMMARY
    return [
        rec.id
        for rec in t.of_user(t.table(level), scope.user_id)
        if (not statuses or scope.admits(SummaryStatus(rec.status).value, rec.valid_to))
        and in_range(rec, scope.time_range)
        and (filters is None or filters.matches(rec.metadata))
    ]


def _distances(mat: np.ndarray, norms: np.ndarray, vector: Vector) -> np.ndarray:
    query = np.asarray(vector, dtype=np.float32)
    scale = norms * float(np.linalg.norm(query))
    return np.asarray(1.0 - (mat @ query) / np.where(scale == 0.0, 1.0, scale))


def _matrix(t: MemoryTables, scope: RowScope) -> tuple[list[str], np.ndarray, np.ndarray]:
    ids = candidates(t, scope)
    if not ids:
        return ids, np.zeros((0, 1), np.float32), np.zeros(0, np.float32)
    mat = np.stack([t.vectors[(scope.level, scope.user_id, i)] for i in ids])
    return ids, mat, np.linalg.norm(mat, axis=1)


def nearest_rows(t: MemoryTables, scope: RowScope, vector: Vector, k: int) -> list[Row]:
    """HIT_COLUMNS rows of the k nearest admitted records, with their `_distance`."""
    ids, mat, norms = _matrix(t, scope)
    if not ids or k <= 0:
        return []
    distance = _distances(mat, norms, vector)
    table = t.table(scope.level)
    return [
        {**hit_row(scope.level, table[(scope.user_id, ids[n])]), "_distance": float(distance[n])}
        for n in np.argsort(distance, kind="stable")[:k]
    ]


def nearest_many(
    t: MemoryTables, scope: RowScope, vectors: Sequence[Vector], k: int
) -> list[list[tuple[str, float]]]:
    """(id, cosine similarity) of each vector's k nearest, from one matrix of the user's."""
    ids, mat, norms = _matrix(t, scope)
    if not ids or k <= 0:
        return [[] for _ in vectors]
    out = []
    for vector in vectors:
        distance = _distances(mat, norms, vector)
        order = np.argsort(distance, kind="stable")[:k]
        out.append([(ids[n], 1.0 - float(distance[n])) for n in order])
    return out


__all__ = ["candidates", "nearest_many", "nearest_rows"]
