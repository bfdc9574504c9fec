"""LongMemEval at matched budgets without disk: scoring a cut, hymem's own context, the stored
budgets a resumed run reads, and a flat ranking cut to a budget."""

from __future__ import annotations

from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.longmemeval.data import LmeQuestion, load_longmemeval
from hymem.evaluation.longmemeval.matched import (
    flat_at_budget,
    matched_scores,
    own_context,
    stored_budgets,
)
from hymem.evaluation.longmemeval.metrics import Evidence, evidence_of
from hymem.evaluation.longmemeval.records import RetrievalRecord
from hymem.evaluation.longmemeval.systems import QuestionRetriever
from hymem.llm.tokens import count_tokens

from tests.fixtures_lme import LME_MINI

EVIDENCE = Evidence(turns=frozenset({"s1_1", "s2_3"}), sessions=frozenset({"s1", "s2"}))


def question(qid: str) -> LmeQuestion:
    return {q.question_id: q for q in load_longmemeval(LME_MINI).questions}[qid]


def record(system: str, **kw: object) -> RetrievalRecord:
    return RetrievalRecord.model_validate(
        {"question_id": "q", "question_type": "multi-session", "system": system,
         "granularity": "turn", "ranked_ids": [], **kw}
    )  # fmt: skip


def test_matched_scores_are_set_recalls_at_levels_with_evidence() -> None:
    got = matched_scores(EVIDENCE, ["s1_1", "s1_2"], ["s1"])
    assert got == {
        "session": {"recall_any": 1.0, "recall_all": 0.0},
        "turn": {"recall_any": 1.0, "recall_all": 0.0},
    }
    assert set(matched_scores(EVIDENCE, None, ["s1", "s2"])) == {"session"}  # session units
    no_sessions = Evidence(turns=EVIDENCE.turns, sessions=frozenset())
    assert set(matched_scores(no_sessions, ["s2_3"], ["s2"])) == {"turn"}


def test_a_context_at_its_own_budget_is_all_of_it() -> None:
    rec = record(
        "hymem-deep", ranked_ids=["seg-1", "seg-2"], turn_ids=["s2_3", "s2_4"], unit_tokens=[30, 12]
    )
    own = own_context(rec, EVIDENCE)
    assert (own.budget, own.tokens, own.units, own.first_over) == (42, 42, 2, False)
    assert own.metrics["session"] == {"recall_any": 1.0, "recall_all": 0.0}


def test_stored_budgets_come_from_context_rows_only() -> None:
    rows = [
        record("hymem-light", unit_tokens=[5, 6]),
        record("hymem-deep", unit_tokens=[]),
        record("bm25-turn", unit_tokens=[100]),
    ]
    assert stored_budgets(rows) == {("q", "hymem-light"): 11, ("q", "hymem-deep"): 0}


class _Mem:
    """What QuestionRetriever.flat needs: an embedder and a config."""

    _embedder = HashingEmbedder(64)  # what `embedder_of` reads
    config = MemoryConfig.defaults(embedder="hashing")


def test_flat_ranking_cut_to_a_budget() -> None:
    q = question("q_ms_02")
    retriever = QuestionRetriever(_Mem(), q, rrf_k=60)  # type: ignore[arg-type]
    ranking = retriever.flat("turn").rank("bm25", q.question)
    units = {u.id: u for u in retriever.flat("turn").units}
    first, second = (count_tokens(units[i].text) for i in ranking[:2])
    cut = flat_at_budget(retriever, "bm25-turn", evidence_of(q), first + second)
    assert (cut.units, cut.tokens, cut.budget) == (2, first + second, first + second)
    nothing = flat_at_budget(retriever, "bm25-turn", evidence_of(q), first - 1)
    assert nothing.first_over and nothing.units == 0 and nothing.tokens == 0
    assert nothing.metrics["session"] == {"recall_any": 0.0, "recall_all": 0.0}
    everything = flat_at_budget(retriever, "dense-session", evidence_of(q), 10_000)
    assert everything.units == len(q.sessions)
    assert everything.metrics == {"session": {"recall_any": 1.0, "recall_all": 1.0}}
