"""The paper's flat retrieval baselines, over one question's haystack at a time.

As in the official `run_retrieval.py`, only the USER's turns are indexed: turn units are the
user turns (id `<session_id>_<index>`, the index counting every turn of the session), session
units are a session's user turns joined with spaces (id = session id). The rankers are the
shared ones (`hymem.evaluation.flat`): BM25 with the paper's whitespace tokenisation
(`text.split(" ")`, case and punctuation kept), dense cosine under the run's embedder, and
their reciprocal-rank fusion.

Empty turns are left out, as the write path leaves them out of the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from hymem.evaluation.flat import FlatIndex, Ranker, bm25_order, dense_order
from hymem.evaluation.longmemeval.data import LmeQuestion

if TYPE_CHECKING:
    from hymem.embed.embedders import Embedder

Granularity = Literal["turn", "session"]


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


def flat_index(
    question: LmeQuestion, granularity: Granularity, embedder: Embedder, rrf_k: int
) -> FlatIndex[Unit]:
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
