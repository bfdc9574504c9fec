"""BM25 in pure Python with Tantivy's formula, over the shared analyzer's tokens.

The in-memory store ranks with this so that its lexical results match the Tantivy index's:
the same tokens (`analysis.terms`), the same parameters and the same idf, with statistics taken
over every document in the index (all users and levels, as Tantivy does). Tantivy stores field
lengths in a lossy one-byte code, so scores may differ slightly on long texts; orderings agree.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Generic, TypeVar

from hymem.indexes.lexical.analysis import terms

# Tantivy's (and Lucene's) defaults: term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75

K = TypeVar("K", bound=Hashable)


class Bm25Index(Generic[K]):
    """Documents keyed by any hashable; not thread-safe (the caller locks)."""

    def __init__(self) -> None:
        self._docs: dict[K, tuple[Counter[str], int]] = {}
        self._df: Counter[str] = Counter()
        self._tokens = 0

    def __len__(self) -> int:
        return len(self._docs)

    def put(self, key: K, text: str) -> None:
        """Index (or re-index) one document; a re-indexed one ranks as newest on ties."""
        self.remove(key)
        tokens = terms(text)
        tf = Counter(tokens)
        self._docs[key] = (tf, len(tokens))
        self._df.update(tf.keys())
        self._tokens += len(tokens)

    def remove(self, key: K) -> None:
        old = self._docs.pop(key, None)
        if old is None:
            return
        tf, length = old
        self._df.subtract(tf.keys())
        self._tokens -= length

    def _idf(self, term: str) -> float:
        n, df = len(self._docs), self._df[term]
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: Sequence[str], allowed: Iterable[K], k: int) -> list[tuple[K, float]]:
        """Top-k (key, score) among `allowed` keys holding at least one `query` term, best
        first; ties keep indexing order (Tantivy orders ties by document address)."""
        if not query or k <= 0 or not self._docs:
            return []
        avg_len = self._tokens / len(self._docs)
        weights = {t: self._idf(t) * (1.0 + K1) for t in query if self._df[t] > 0}
        allowed_set = set(allowed)
        scored: list[tuple[K, float]] = []
        for key, (tf, length) in self._docs.items():
            if key not in allowed_set:
                continue
            norm = K1 * (1.0 - B + B * length / avg_len) if avg_len else K1
            score = sum(w * tf[t] / (tf[t] + norm) for t, w in weights.items() if tf[t])
            if score > 0.0:
                scored.append((key, score))
        scored.sort(key=lambda kv: -kv[1])
        return scored[:k]


__all__ = ["K1", "B", "Bm25Index"]
