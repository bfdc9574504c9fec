"""The metadata of a dense-cache entry's rows, interned: each row holds the index of one
distinct metadata dict. A segment's turns share one dict and its summaries inherit it, so a
user has few distinct dicts, and a filter is evaluated once per dict (`meta_compile.mask`)
rather than once per row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from hymem.core.metadata import Metadata, canonical
from hymem.core.types import MetaValue


class MetaInterner:
    """Distinct metadata dicts by canonical JSON; append-only, so a row's index never moves
    (a search's snapshot of `metas` stays valid while a writer interns more)."""

    def __init__(self) -> None:
        self.metas: list[Metadata] = []
        self._index: dict[str, int] = {}
        self.content_bytes = 0

    def ids(self, metas: Sequence[Mapping[str, MetaValue]] | None, n: int) -> np.ndarray:
        """The index of each row's dict (None: n rows without metadata)."""
        rows = metas if metas is not None else [{}] * n
        return np.fromiter((self.id_of(m) for m in rows), dtype=np.int32, count=n)

    def id_of(self, meta: Mapping[str, MetaValue]) -> int:
        key = canonical(meta)
        at = self._index.get(key)
        if at is None:
            at = self._index[key] = len(self.metas)
            self.metas.append(dict(meta))
            self.content_bytes += 2 * len(key) + 100
        return at


__all__ = ["MetaInterner"]
