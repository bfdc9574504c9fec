"""The paper's flat retrieval baselines, over one question's haystack at a time.

As in the official `run_retrieval.py`, only the USER's turns are indexed: turn units are the
user turns (id `<session_id>_<index>`, the index counting every turn of the session), session
units are a session's user turns joined with spaces (id = session id). Three rankers run over
the same units:

* BM25: `rank_bm25.BM25Okapi` with whitespace tokenisation (`text.split(" ")`, case and
  punctuation kept), the paper's protocol; ties (mostly the zero scores of units that share no
  word with the question) in the order the official `np.argsort(scores)[::-1]` gives them with a
  stable sort, later units first;
* dense: cosine similarity under the run's embedder (MiniLM by default), ties by position;
* hybrid: the two fused by reciprocal rank (`hymem.indexes.fusion`, the store's own k).

Empty turns are left out, as the write path leaves them out of the store.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import numpy as np
from hymem.evaluation.baselines import top_k_indices
from hymem.evaluation.longmemeval.data import LmeQuestion
from hymem.indexes.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion

if TYPE_CHECKING:
    from hymem.embedders import Embedder

Granularity = Literal["turn", "session"]
Ranker = Literal["bm25", "dense", "hybrid"]


@dataclass(frozen=True, slots=True)
class Unit:
    """One indexed item: a user turn or a session's user text."""

    id: str
    session_id: str
    text: str
    date: datetime


def turn_units(question: LmeQuestion) -> list[Unit]:
    return [
        Unit(id=t.id, session_id=s.id, text=t.content, date=s.date)
        for s in question.sessions
        for t in s.turns
        if t.role == "user" and t.usable
    ]


def session_units(question: LmeQuestion) -> list[Unit]:
    return [
        Unit(
            id=s.id,
            session_id=s.id,
            text=" ".join(t.content for t in s.turns if t.role == "user" and t.usable),
            date=s.date,
        )
        for s in question.sessions
    ]


def bm25_order(query: str, texts: list[str]) -> list[int]:
    """Unit positions best first under BM25Okapi with the paper's whitespace tokenisation."""
    if not texts:
        return []
    from rank_bm25 import BM25Okapi

    scores = BM25Okapi([t.split(" ") for t in texts]).get_scores(query.split(" "))
    return [int(i) for i in np.argsort(scores, kind="stable")[::-1]]


def dense_order(query_vector: np.ndarray, matrix: np.ndarray) -> list[int]:
    """Unit positions best first by cosine similarity (rows and query are unit vectors)."""
    if matrix.shape[0] == 0:
        return []
    return top_k_indices(matrix @ query_vector, matrix.shape[0])


class FlatIndex:
    """One question's units at one granularity; vectors are computed once, on first need."""

    def __init__(
        self, units: list[Unit], embedder: Embedder, *, rrf_k: int = DEFAULT_RRF_K
    ) -> None:
        self.units = units
        self.by_id = {u.id: u for u in units}
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()
        self._rankings: dict[tuple[Ranker, str], list[str]] = {}  # hybrid reuses the others

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
            out = [ids[i] for i in bm25_order(query, [u.text for u in self.units])]
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


def flat_index(
    question: LmeQuestion, granularity: Granularity, embedder: Embedder, rrf_k: int
) -> FlatIndex:
    units = turn_units(question) if granularity == "turn" else session_units(question)
    return FlatIndex(units, embedder, rrf_k=rrf_k)


__all__ = [
    "FlatIndex",
    "Granularity",
    "Ranker",
    "Unit",
    "bm25_order",
    "dense_order",
    "flat_index",
    "session_units",
    "turn_units",
]
