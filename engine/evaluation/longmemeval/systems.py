"""The systems a LongMemEval run scores, all over the same question at once.

Retrieval (no model):
    hymem-summary   hymem's light path: `mem.search(level="summary")`, each summary hit mapped to
                    turns by `hit_turn_ids` (its own source turns), then sessions
    hymem-segment   hymem's Level-2 retrieval: `mem.search(level="segment")`, the segments' turns
    (both read as deep as the largest k needs, see `QuestionRetriever.hymem_hits`)
    hymem-light     exactly what the light path reads (`mem.context(depth="light")`: top-k
                    summaries), as of the question date
    hymem-deep      exactly what the deep path reads (`mem.context(depth="deep")`: the segments
                    the select role chose); these two contexts set the matched token budgets
    {bm25,dense,hybrid}-{turn,session}   the paper's flat baselines (`flat.py`)

Question answering (only with a model): `hymem` (`Memory.ask`, depth auto) when a hymem
system is selected, and each selected flat baseline answering with the same `deep_answer` role
over its top `qa_k` units, expanded as the paper reads them (a turn with the reply that follows
it, a session whole), oldest first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from hymem.api.internals import embedder_of
from hymem.core.errors import UserInputError
from hymem.core.types import Hit, Level
from hymem.evaluation.baselines import answer_with
from hymem.evaluation.longmemeval.flat import FlatIndex, Granularity, Ranker, Unit, flat_index
from hymem.evaluation.longmemeval.metrics import (
    KS,
    Evidence,
    corpus_of,
    distinct_sessions,
    scores_at,
)
from hymem.evaluation.longmemeval.records import RetrievalRecord
from hymem.evaluation.systems import SystemResult, answer_result, hit_turn_ids
from hymem.llm.roles import ContextItem
from hymem.llm.tokens import count_tokens

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.evaluation.longmemeval.data import LmeQuestion

HYMEM_SYSTEMS: dict[str, Level] = {"hymem-summary": Level.SUMMARY, "hymem-segment": Level.SEGMENT}
# hymem's contexts, whose tokens are the budgets the flat baselines are cut to.
CONTEXT_SYSTEMS: dict[str, Literal["light", "deep"]] = {
    "hymem-light": "light",
    "hymem-deep": "deep",
}
_GRANULARITIES: tuple[Granularity, ...] = ("turn", "session")
_RANKERS: tuple[Ranker, ...] = ("bm25", "dense", "hybrid")
FLAT_SYSTEMS: dict[str, tuple[Ranker, Granularity]] = {
    f"{ranker}-{gran}": (ranker, gran) for gran in _GRANULARITIES for ranker in _RANKERS
}
RETRIEVAL_SYSTEMS: tuple[str, ...] = (*HYMEM_SYSTEMS, *CONTEXT_SYSTEMS, *FLAT_SYSTEMS)
HYMEM_QA = "hymem"
# Deep enough for the largest k the benchmark scores; hymem's hits are read deeper when their
# turns do not yet cover that many turns and sessions (summaries share segments), up to a cap.
SEARCH_K = max(KS)
MAX_SEARCH_K = 3200


def check_systems(names: Iterable[str]) -> list[str]:
    """The selected retrieval systems in the given order; UserInputError names unknown ones."""
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in RETRIEVAL_SYSTEMS]
    if unknown or not names:
        raise UserInputError(
            f"unknown system(s) {unknown or names!r}: choose from {', '.join(RETRIEVAL_SYSTEMS)}"
        )
    return list(dict.fromkeys(names))


def qa_systems(selected: Sequence[str]) -> list[str]:
    """QA answerers for the selected retrieval systems (see the module docstring)."""
    hymem = any(s in HYMEM_SYSTEMS or s in CONTEXT_SYSTEMS for s in selected)
    out = [HYMEM_QA] if hymem else []
    return out + [s for s in selected if s in FLAT_SYSTEMS]


@dataclass
class Ranked:
    """One system's raw ranking of one question, before scoring."""

    system: str
    granularity: Granularity
    ranked_ids: list[str]
    turn_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # of the top items, for the token budget
    latency_ms: float = 0.0


class QuestionRetriever:
    """Ranks one ingested question with any retrieval system; flat indexes built on demand."""

    def __init__(self, mem: Memory, question: LmeQuestion, *, rrf_k: int) -> None:
        self.mem = mem
        self.question = question
        self._rrf_k = rrf_k
        self._flat: dict[Granularity, FlatIndex[Unit]] = {}

    def flat(self, granularity: Granularity) -> FlatIndex[Unit]:
        if granularity not in self._flat:
            self._flat[granularity] = flat_index(
                self.question, granularity, embedder_of(self.mem), self._rrf_k
            )
        return self._flat[granularity]

    def rank(self, system: str) -> Ranked:
        t0 = time.perf_counter()
        q = self.question
        if system in HYMEM_SYSTEMS:
            hits, turns = self.hymem_hits(HYMEM_SYSTEMS[system])
            top = hits[:SEARCH_K]
            out = Ranked(system, "turn", [h.id for h in top], turns, [h.text for h in top])
        elif system in CONTEXT_SYSTEMS:
            hits = self.mem.context(
                q.question,
                user_id=q.question_id,
                depth=CONTEXT_SYSTEMS[system],
                as_of=q.question_date,
            )
            turns = hit_turn_ids(self.mem, hits, q.question_id)
            out = Ranked(system, "turn", [h.id for h in hits], turns, [h.text for h in hits])
        else:
            ranker, gran = FLAT_SYSTEMS[system]
            index = self.flat(gran)
            ids = index.rank(ranker, q.question)
            texts = [index.by_id[i].text for i in ids[:SEARCH_K]]
            out = Ranked(system, gran, ids[:SEARCH_K], ids if gran == "turn" else [], texts)
        out.latency_ms = (time.perf_counter() - t0) * 1000.0
        return out

    def hymem_hits(self, level: Level) -> tuple[list[Hit], list[str]]:
        """hymem's hits and the turns behind them, searched 4x deeper (to MAX_SEARCH_K) until
        the turns cover SEARCH_K turns and sessions or the whole haystack: many summaries
        share a segment, so 50 summary hits can stand for only a few dozen turns."""
        q = self.question
        need_turns = min(SEARCH_K, q.turn_count)
        need_sessions = min(SEARCH_K, len(q.sessions))
        k = SEARCH_K
        while True:
            hits = self.mem.search(q.question, user_id=q.question_id, k=k, level=level)
            turns = hit_turn_ids(self.mem, hits, q.question_id)
            covered = len(turns) >= need_turns and len(distinct_sessions(turns)) >= need_sessions
            if covered or len(hits) < k or k >= MAX_SEARCH_K:
                return hits, turns
            k *= 4


def score_ranking(question: LmeQuestion, evidence: Evidence, ranked: Ranked) -> RetrievalRecord:
    """The benchmark's metrics of one ranking at both levels, skipping a level without
    evidence (the reason is kept on the record and counted in the report)."""
    corpus_turns, corpus_sessions = corpus_of(question)
    counts = [count_tokens(t) for t in ranked.texts]
    metrics: dict[str, dict[str, float]] = {}
    skipped: dict[str, str] = {}
    if ranked.granularity != "turn":
        skipped["turn"] = "ranks sessions, not turns"
    elif not evidence.turns:
        skipped["turn"] = "no evidence turn (has_answer)"
    else:
        metrics["turn"] = scores_at(ranked.turn_ids, evidence.turns, corpus_turns)
    if not evidence.sessions:
        skipped["session"] = "no evidence session (answer session with a has_answer user turn)"
    elif ranked.granularity == "turn":
        metrics["session"] = scores_at(
            ranked.turn_ids, evidence.sessions, corpus_turns, turns_to_sessions=True
        )
    else:
        metrics["session"] = scores_at(ranked.ranked_ids, evidence.sessions, corpus_sessions)
    sessions = (
        distinct_sessions(ranked.turn_ids) if ranked.granularity == "turn" else ranked.ranked_ids
    )
    return RetrievalRecord(
        question_id=question.question_id,
        question_type=question.question_type,
        system=ranked.system,
        granularity=ranked.granularity,
        ranked_ids=ranked.ranked_ids,
        turn_ids=ranked.turn_ids,
        session_ids=list(sessions),
        metrics=metrics,
        skipped=skipped,
        context_tokens=context_tokens(counts),
        unit_tokens=counts,
        latency_ms=ranked.latency_ms,
        finished_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )


def context_tokens(counts: Sequence[int], ks: Sequence[int] = KS) -> dict[str, int]:
    """Tokens of the top-k items for each k (from each item's count): what that top-k would
    put in a prompt."""
    return {str(k): sum(counts[:k]) for k in ks}


def ask_hymem(mem: Memory, question: LmeQuestion) -> SystemResult:
    """The one place hymem is asked a LongMemEval question, "as of" its question date."""
    t0 = time.perf_counter()
    ans = mem.ask(
        question.question,
        user_id=question.question_id,
        depth="auto",
        as_of=question.question_date,
    )
    wall_ms = (time.perf_counter() - t0) * 1000.0
    return answer_result(ans, wall_ms, hit_turn_ids(mem, ans.evidence, question.question_id))


def flat_passages(question: LmeQuestion, record: RetrievalRecord, k: int) -> list[ContextItem]:
    """The top-k units as the paper's reader sees them, oldest first: a turn with the turn that
    follows it (its round), a session whole (both roles)."""
    sessions = {s.id: s for s in question.sessions}
    turn_at = {t.id: (s, i) for s in question.sessions for i, t in enumerate(s.turns)}
    items: list[ContextItem] = []
    for unit_id in record.ranked_ids[:k]:
        if record.granularity == "session":
            session, turns = sessions[unit_id], sessions[unit_id].turns
        else:
            session, at = turn_at[unit_id]
            turns = session.turns[at : at + 2]
        text = "\n".join(f"{t.role}: {t.content.strip()}" for t in turns if t.usable)
        items.append(
            ContextItem(id=unit_id, text=text, time_start=session.date, time_end=session.date)
        )
    return sorted(items, key=lambda p: p.time_start or datetime.min)


def answer_flat(
    mem: Memory, question: LmeQuestion, record: RetrievalRecord, k: int
) -> SystemResult:
    """A flat baseline's answer: the same `deep_answer` role over its top-k passages."""
    return answer_with(mem, question.question, flat_passages(question, record, k), 0.0)


__all__ = [
    "CONTEXT_SYSTEMS",
    "FLAT_SYSTEMS",
    "HYMEM_QA",
    "HYMEM_SYSTEMS",
    "MAX_SEARCH_K",
    "RETRIEVAL_SYSTEMS",
    "SEARCH_K",
    "QuestionRetriever",
    "Ranked",
    "answer_flat",
    "ask_hymem",
    "check_systems",
    "context_tokens",
    "flat_passages",
    "qa_systems",
    "score_ranking",
]
