"""LongMemEval's retrieval metrics, as the benchmark's own code defines them (pure functions).

Following `src/retrieval/eval_utils.py` of the official repository:

* recall_any@k = 1 when some relevant id is in the SET of the top-k ranked ids, else 0;
  recall_all@k = 1 when every relevant id is in it. (With no relevant ids these are 0 and 1;
  the harness never asks: a question without evidence at a level is skipped there.)
* DCG@k = rel_1 + sum_{i=2..k} rel_i / log2(i): the official form, whose first two ranks both
  weigh 1 (it is not the log2(i + 1) variant). NDCG@k = DCG@k of the ranking over the ideal
  DCG@k, the ideal being all relevances of the WHOLE corpus sorted best first, so the ideal
  counts every relevant item of the corpus, retrieved or not. 0 when the ideal is 0.
* Turn rankings are scored at session level by stripping the turn index from every id (ranking
  and corpus alike) and growing k until the top k turns cover k distinct sessions (or the
  corpus is exhausted); recall is then over that set and NDCG over those turns, each turn
  carrying its session's relevance.

Evidence (`evidence_of`): turn level, every turn with `has_answer: true`; session level, the
`answer_session_ids` whose user turns carry a `has_answer` (the official code renames the
others "noans"). The corpus a ranking is scored against is the question's full haystack (every
turn of both roles, every session), the same for every system, so NDCG's ideal never depends
on what a system chose to index.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import NamedTuple

from hymem.evaluation.longmemeval.data import LmeQuestion

KS: tuple[int, ...] = (1, 3, 5, 10, 30, 50)
METRICS: tuple[str, ...] = ("recall_any", "recall_all", "ndcg")
LEVELS: tuple[str, ...] = ("session", "turn")


class Scores(NamedTuple):
    recall_any: float
    recall_all: float
    ndcg: float


class Evidence(NamedTuple):
    turns: frozenset[str]
    sessions: frozenset[str]


def evidence_of(question: LmeQuestion) -> Evidence:
    """The benchmark's evidence at both levels (see the module docstring)."""
    answer_ids = set(question.answer_session_ids)
    turns = frozenset(t.id for s in question.sessions for t in s.turns if t.has_answer)
    sessions = frozenset(
        s.id
        for s in question.sessions
        if s.id in answer_ids and any(t.has_answer for t in s.turns if t.role == "user")
    )
    return Evidence(turns=turns, sessions=sessions)


def corpus_of(question: LmeQuestion) -> tuple[list[str], list[str]]:
    """(every turn id, every session id) of the question's haystack, in file order."""
    turns = [t.id for s in question.sessions for t in s.turns]
    return turns, [s.id for s in question.sessions]


def dcg(relevances: Sequence[float], k: int) -> float:
    """The official DCG@k: rel_1 + sum_{i>=2} rel_i / log2(i)."""
    rel = list(relevances)[:k]
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i) for i, r in enumerate(rel[1:], start=2))


def ndcg(ranked: Sequence[str], relevant: Collection[str], corpus: Sequence[str], k: int) -> float:
    """NDCG@k with the ideal DCG taken over the whole corpus's relevances."""
    wanted = set(relevant)
    ideal = dcg(sorted((1.0 if c in wanted else 0.0 for c in corpus), reverse=True), k)
    if ideal == 0:
        return 0.0
    return dcg([1.0 if r in wanted else 0.0 for r in ranked[:k]], k) / ideal


def retrieval_scores(
    ranked: Sequence[str], relevant: Collection[str], corpus: Sequence[str], k: int
) -> Scores:
    """recall_any@k, recall_all@k and NDCG@k of one ranking (ids best first)."""
    top = set(ranked[:k])
    return Scores(
        recall_any=float(any(r in top for r in relevant)),
        recall_all=float(all(r in top for r in relevant)),
        ndcg=ndcg(ranked, relevant, corpus, k),
    )


def strip_turn_index(turn_id: str) -> str:
    """`answer_4be1b6b4_2_7` -> `answer_4be1b6b4_2`: the session a benchmark turn id names."""
    return "_".join(turn_id.split("_")[:-1])


def session_k(ranked_sessions: Sequence[str], k: int, corpus_size: int) -> int:
    """The official effective k: grown from k until the top turns cover k distinct sessions."""
    effective = k
    while effective <= corpus_size and len(set(ranked_sessions[:effective])) < k:
        effective += 1
    return effective


def turn_to_session_scores(
    ranked_turns: Sequence[str],
    relevant_sessions: Collection[str],
    corpus_turns: Sequence[str],
    k: int,
) -> Scores:
    """Session-level scores of a turn ranking, as the official code converts them."""
    ranked = [strip_turn_index(t) for t in ranked_turns]
    corpus = [strip_turn_index(t) for t in corpus_turns]
    return retrieval_scores(ranked, relevant_sessions, corpus, session_k(ranked, k, len(corpus)))


def scores_at(
    ranked: Sequence[str],
    relevant: Collection[str],
    corpus: Sequence[str],
    ks: Sequence[int] = KS,
    *,
    turns_to_sessions: bool = False,
) -> dict[str, float]:
    """{"recall_any@k": .., "recall_all@k": .., "ndcg@k": ..} for every k."""
    score = turn_to_session_scores if turns_to_sessions else retrieval_scores
    out: dict[str, float] = {}
    for k in ks:
        s = score(ranked, relevant, corpus, k)
        out.update({f"recall_any@{k}": s.recall_any, f"recall_all@{k}": s.recall_all})
        out[f"ndcg@{k}"] = s.ndcg
    return out


def distinct_sessions(ranked_turns: Sequence[str]) -> list[str]:
    """The sessions of a turn ranking, each once, in first-seen order."""
    return list(dict.fromkeys(strip_turn_index(t) for t in ranked_turns))


__all__ = [
    "KS",
    "LEVELS",
    "METRICS",
    "Evidence",
    "Scores",
    "corpus_of",
    "dcg",
    "distinct_sessions",
    "evidence_of",
    "ndcg",
    "retrieval_scores",
    "scores_at",
    "session_k",
    "strip_turn_index",
    "turn_to_session_scores",
]
