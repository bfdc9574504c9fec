"""The two search primitives a store serves: dense (vectors) and lexical (BM25).

Fusion, `Filter` parsing and hits live above, in `hymem.search`; a `RowScope` built there
says which rows either primitive may return, applied inside the index before the top-k cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from hymem.core.types import Level
from hymem.indexes.protocol import Row, RowScope, Vector


@runtime_checkable
class DenseSearch(Protocol):
    """Nearest neighbours by cosine similarity, and the search rows of hits."""

    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        """Top-k rows (HIT_COLUMNS[level] + `_distance`, the cosine distance) nearest to
        `vector`, best first; filters apply before the cut. A vector of another dimension
        raises `StoreError`."""
        ...

    def dense_search(self, scope: RowScope, vector: Vector, k: int) -> list[tuple[str, float]]:
        """`dense_rows` as (id, cosine similarity), best first."""
        ...

    def dense_search_many(
        self, scope: RowScope, vectors: Sequence[Vector], k: int
    ) -> list[list[tuple[str, float]]]:
        """`dense_search` of each vector, in one pass where the store can (write-time
        consolidation asks for the neighbours of a whole flush's summaries at once)."""
        ...

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        """HIT_COLUMNS[level] rows of the user's `ids`, keyed by id; unknown ids are absent.
        A row's `metadata` is a dict."""
        ...


@runtime_checkable
class LexicalSearch(Protocol):
    """BM25 over the derived lexical index, which can always be rebuilt from the records."""

    @property
    def lexical_unavailable(self) -> bool:
        """True while lexical search cannot be served (its derived index is damaged or missing
        and, on a read-only handle, not yet rebuilt by the writer): `lexical_search` then finds
        nothing and hybrid search is dense only, its hits flagged."""
        ...

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        """Top-k (id, BM25) over `hymem.indexes.lexical.analysis.terms`, best first. Any text is
        accepted and never raises; text with no content words matches nothing."""
        ...

    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        """Rebuild the lexical index from the stored records; returns documents per level.
        `progress(n)` gets the number indexed since its previous call."""
        ...


__all__ = ["DenseSearch", "LexicalSearch"]
