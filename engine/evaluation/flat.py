"""Flat retrieval over a benchmark's raw units (turns or sessions), shared by the LoCoMo and
LongMemEval harnesses so both compare hymem with the same baselines. Three rankers run over the
same units:

* BM25: `rank_bm25.BM25Okapi` over the units' tokens (the tokeniser is the caller's: LongMemEval
  keeps the paper's whitespace split, LoCoMo lowercases words); ties in the order the official
  `np.argsort(scores)[::-1]` gives them with a stable sort, later units first;
* dense: cosine similarity under the run's embedder, ties by position (naive RAG's ranking);
* hybrid: the two fused by reciprocal rank (`hymem.search.fusion`, the store's own k).

Each unit's tokens (`count_tokens` of its text) are counted once, on first need, so a ranking
can be cut to a token budget (`hymem.evaluation.budget`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

import numpy as np
from hymem.evaluation.baselines import top_k_indices
from hymem.llm.tokens import count_tokens
from hymem.search.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion

if TYPE_CHECKING:
    from hymem.embed.embedders import Embedder

Ranker = Literal["bm25", "dense", "hybrid"]
RANKERS: tuple[Ranker, ...] = ("bm25", "dense", "hybrid")
Tokenizer = Callable[[str], list[str]]

_WORD = re.compile(r"\w+")


class TextUnit(Protocol):
    """What a flat index needs of a unit: an id and the text it indexes."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


U = TypeVar("U", bound=TextUnit)


def whitespace_tokens(text: str) -> list[str]:
    """The LongMemEval paper's tokenisation: split on single spaces, case and punctuation kept."""
    return text.split(" ")


def word_tokens(text: str) -> list[str]:
    """Lowercased word characters: a fair BM25 where no paper fixes the protocol."""
    return _WORD.findall(text.lower())


def bm25_order(query: str, texts: list[str], tokenize: Tokenizer = whitespace_tokens) -> list[int]:
    """Unit positions best first under BM25Okapi."""
    if not texts:
        return []
    from rank_bm25 import BM25Okapi

    scores = BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize(query))
    return [int(i) for i in np.argsort(scores, kind="stable")[::-1]]


def dense_order(query_vector: np.ndarray, matrix: np.ndarray) -> list[int]:
    """Unit positions best first by cosine similarity (rows and query are unit vectors)."""
    if matrix.shape[0] == 0:
        return []
    return top_k_indices(matrix @ query_vector, matrix.shape[0])


class FlatIndex(Generic[U]):
    """One corpus of units; vectors and token counts are computed once, on first need."""

    def __init__(
        self,
        units: Sequence[U],
        embedder: Embedder,
        *,
        rrf_k: int = DEFAULT_RRF_K,
        tokenize: Tokenizer = whitespace_tokens,
    ) -> None:
        self.units = list(units)
        self.by_id = {u.id: u for u in self.units}
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._tokenize = tokenize
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()
        self._rankings: dict[tuple[Ranker, str], list[str]] = {}  # hybrid reuses the others
        self._tokens: dict[str, int] = {}

    def _vectors(self) -> np.ndarray:
        with self._lock:
            if self._matrix is None:
                texts = [u.text for u in self.units]
                self._matrix = (
                    np.asarray(self._embedder.embed(texts), dtype=np.float32)
                    if texts
                    else np.zeros((0, self._embedder.dim), dtype=np.float32)
                )
            return self._matrix

    def rank(self, ranker: Ranker, query: str) -> list[str]:
        """Every unit id, best first."""
        cached = self._rankings.get((ranker, query))
        if cached is not None:
            return cached
        ids = [u.id for u in self.units]
        if ranker == "bm25":
            texts = [u.text for u in self.units]
            out = [ids[i] for i in bm25_order(query, texts, self._tokenize)]
        elif ranker == "dense":
            q = np.asarray(self._embedder.embed([query]), dtype=np.float32)[0]
            out = [ids[i] for i in dense_order(q, self._vectors())]
        else:
            fused = reciprocal_rank_fusion(
                [self.rank("dense", query), self.rank("bm25", query)], k=self._rrf_k
            )
            out = [i for i, _ in fused]
        self._rankings[(ranker, query)] = out
        return out

    def tokens(self, unit_id: str) -> int:
        """Tokens of one unit's text, counted once."""
        n = self._tokens.get(unit_id)
        if n is None:
            n = self._tokens[unit_id] = count_tokens(self.by_id[unit_id].text)
        return n

    def with_tokens(self, ids: Sequence[str]) -> Iterator[tuple[str, int]]:
        """(id, tokens) along a ranking, lazily: a budget cut counts only what it reads."""
        return ((i, self.tokens(i)) for i in ids)


__all__ = [
    "RANKERS",
    "FlatIndex",
    "Ranker",
    "TextUnit",
    "Tokenizer",
    "bm25_order",
    "dense_order",
    "whitespace_tokens",
    "word_tokens",
]
