"""Small pure helpers of the write path: a bounded recompute-on-miss cache, and segment vectors
pooled from the turn vectors already computed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np

K = TypeVar("K")
V = TypeVar("V")


def cached_values(
    cache: dict[K, V], keys: list[K], compute: Callable[[list[K]], Iterable[V]], limit: int
) -> list[V]:
    """The values for `keys` (distinct), computing the missing ones in one batch.

    A cache, never state: past `limit` entries it is dropped whole before the fresh values go
    in, which only costs recomputing them later. Values are taken before that, so a key this
    call needs is never lost to the drop."""
    missing = [k for k in keys if k not in cache]
    fresh = dict(zip(missing, compute(missing), strict=True)) if missing else {}
    values = [fresh[k] if k in fresh else cache[k] for k in keys]
    if len(cache) + len(fresh) > limit:
        cache.clear()
    cache.update(fresh)
    return values


def pooled_vector(turn_vectors: np.ndarray) -> list[float]:
    """A segment's vector: the normalised mean of its turns' unit vectors.

    Every turn counts, however long the segment (one embedding of the joined text would stop at
    the model's input limit), and no text is embedded twice."""
    mean = np.asarray(turn_vectors, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return [float(x) for x in (mean / norm if norm > 0 else mean)]


__all__ = ["cached_values", "pooled_vector"]
