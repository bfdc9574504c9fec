"""What the read path searches through: the `VectorSearcher` protocol (`HybridSearcher` in a
Memory, a fake in unit tests) and `QueryVectors`, each query of an ask embedded once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hymem.core.types import Hit
from hymem.embed.embedders import Embedder
from hymem.indexes.protocol import Row, Vector
from hymem.search.hybrid import Ranked
from hymem.search.scope import SearchScope


class VectorSearcher(Protocol):
    """The searches the reader runs: a checked scope, and the query's vector, embedded once
    per ask by the reader and reused across rounds (`QueryVectors`). `rank` and `rows` let the
    light path rank hundreds of candidates as ids and read rows only for those it fuses and
    reads."""

    def find(self, query: str, scope: SearchScope, vector: Vector | None = None) -> list[Hit]: ...

    def rank(
        self,
        query: str,
        scope: SearchScope,
        vector: Vector,
        *,
        also: Sequence[Vector] = (),
        also_k: int = 0,
    ) -> Ranked: ...

    def rows(self, scope: SearchScope, ids: Sequence[str]) -> dict[str, Row]: ...


class QueryVectors:
    """The vectors of one ask's queries: each embedded once, those new to a call in one batch,
    and kept for the ask's later rounds and searches."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._vectors: dict[str, Vector] = {}

    def __getitem__(self, query: str) -> Vector:
        """The query's vector, embedded now if it was not yet."""
        vector = self._vectors.get(query)
        if vector is None:
            vector = self._vectors[query] = self._embedder.embed([query])[0]
        return vector

    def embed_all(self, queries: Sequence[str]) -> None:
        """Embed the queries not embedded yet, in one batch."""
        new = [q for q in dict.fromkeys(queries) if q not in self._vectors]
        if new:
            self._vectors.update(zip(new, self._embedder.embed(new), strict=True))


__all__ = ["QueryVectors", "VectorSearcher"]
