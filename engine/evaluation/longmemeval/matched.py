"""Ranking one LongMemEval question, and every flat baseline at hymem's own cost.

After a question's rankings are scored, hymem's two contexts (`hymem-light`, `hymem-deep`) set
that question's token budgets; each flat baseline's full ranking is cut to each budget (the
longest prefix that fits, `hymem.evaluation.budget`) and scored by recall_any/recall_all over
the sessions the cut holds and, for turn units, over its turns. A unit's tokens are those of
its indexed text (user turns, or a session's user text); a hymem context's are its hits' text.

Resuming: a context row already in retrieval.jsonl gives its budget from its `unit_tokens`
(`stored_budgets`), so flat rows ranked by a later invocation are still matched. Flat rows
written BEFORE any context row of their question carry no matched scores (the log keeps a key's
first row); the report's n says over how many questions each figure is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hymem.core.logging import get_logger
from hymem.evaluation.budget import Cut, cut_to_budget, recall_any_all
from hymem.evaluation.longmemeval.metrics import Evidence, distinct_sessions, evidence_of
from hymem.evaluation.longmemeval.records import MatchedBudget, RetrievalRecord
from hymem.evaluation.longmemeval.systems import (
    CONTEXT_SYSTEMS,
    FLAT_SYSTEMS,
    QuestionRetriever,
    score_ranking,
)

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.evaluation.longmemeval.data import LmeQuestion
    from hymem.evaluation.predictions import PredictionLog

log = get_logger("hymem.evaluation.longmemeval.matched")

BudgetKey = tuple[str, str]  # (question_id, context system)


def stored_budgets(rows: Iterable[RetrievalRecord]) -> dict[BudgetKey, int]:
    """The token budget of every hymem context row already logged."""
    return {
        (r.question_id, r.system): sum(r.unit_tokens) for r in rows if r.system in CONTEXT_SYSTEMS
    }


def matched_scores(
    evidence: Evidence, turns: list[str] | None, sessions: list[str]
) -> dict[str, dict[str, float]]:
    """recall_any/recall_all at each level that has evidence (turn level only for turn units,
    `turns` None otherwise)."""
    out: dict[str, dict[str, float]] = {}
    if evidence.sessions:
        out["session"] = recall_any_all(sessions, evidence.sessions)
    if turns is not None and evidence.turns:
        out["turn"] = recall_any_all(turns, evidence.turns)
    return out


def own_context(record: RetrievalRecord, evidence: Evidence) -> MatchedBudget:
    """A hymem context at its own budget: all of it."""
    tokens = sum(record.unit_tokens)
    return MatchedBudget(
        budget=tokens,
        tokens=tokens,
        units=len(record.ranked_ids),
        metrics=matched_scores(evidence, record.turn_ids, distinct_sessions(record.turn_ids)),
    )


def flat_at_budget(
    retriever: QuestionRetriever, system: str, evidence: Evidence, budget: int
) -> MatchedBudget:
    """A flat baseline's whole ranking cut to `budget` and scored."""
    ranker, granularity = FLAT_SYSTEMS[system]
    index = retriever.flat(granularity)
    cut: Cut = cut_to_budget(
        index.with_tokens(index.rank(ranker, retriever.question.question)), budget
    )
    ids = list(cut.ids)
    if granularity == "turn":
        metrics = matched_scores(evidence, ids, distinct_sessions(ids))
    else:
        metrics = matched_scores(evidence, None, ids)
    return MatchedBudget(
        budget=budget,
        tokens=cut.tokens,
        units=cut.units,
        first_over=cut.first_over,
        metrics=metrics,
    )


def rank_question(
    mem: Memory,
    q: LmeQuestion,
    systems: list[str],
    rlog: PredictionLog[RetrievalRecord],
    stored: Mapping[BudgetKey, int],
) -> int:
    """Rank, score and match one question with the systems not yet in retrieval.jsonl;
    `stored` holds the budgets of context rows logged by earlier invocations."""
    todo = [s for s in systems if (q.question_id, s) not in rlog.done]
    if not todo:
        return 0
    evidence = evidence_of(q)
    if not q.abstention:
        for level, ids in (("turn", evidence.turns), ("session", evidence.sessions)):
            if not ids:
                log.warning("longmemeval.no_evidence", question_id=q.question_id, level=level)
    retriever = QuestionRetriever(mem, q, rrf_k=mem.config.rrf_k)
    records = [score_ranking(q, evidence, retriever.rank(system)) for system in todo]
    if q.abstention:  # ranked only so the flat baselines can answer it
        for record in records:
            record.metrics = {}
            record.skipped = {"session": "abstention question", "turn": "abstention question"}
    else:
        _match(retriever, evidence, records, stored)
    for record in records:
        rlog.append(record)
    return len(todo)


def _match(
    retriever: QuestionRetriever,
    evidence: Evidence,
    records: list[RetrievalRecord],
    stored: Mapping[BudgetKey, int],
) -> None:
    """Fill `matched` on the question's new rows: each context at its own budget, each flat
    baseline at every context budget known for the question (new or stored)."""
    qid = retriever.question.question_id
    budgets = {s: stored[(qid, s)] for s in CONTEXT_SYSTEMS if (qid, s) in stored}
    for record in records:
        if record.system in CONTEXT_SYSTEMS:
            record.matched[record.system] = own_context(record, evidence)
            budgets[record.system] = record.matched[record.system].budget
    for record in records:
        if record.system in FLAT_SYSTEMS:
            for context, budget in budgets.items():
                record.matched[context] = flat_at_budget(retriever, record.system, evidence, budget)


__all__ = ["flat_at_budget", "matched_scores", "own_context", "rank_question", "stored_budgets"]
