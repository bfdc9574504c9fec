"""summary.json and report.md of a LongMemEval run, from hand-built rows with known numbers."""

from __future__ import annotations

from typing import Any

import pytest
from hymem.evaluation.longmemeval.metrics import KS, METRICS
from hymem.evaluation.longmemeval.records import LmePrediction, MatchedBudget, RetrievalRecord
from hymem.evaluation.longmemeval.report import build_summary, render_report


def scores(value: float) -> dict[str, float]:
    return {f"{m}@{k}": value for m in METRICS for k in KS}


def row(qid: str, qtype: str, system: str, value: float | None, **kw: Any) -> RetrievalRecord:
    gran = "session" if system.endswith("session") else "turn"
    metrics = {} if value is None else {"session": scores(value)}
    if value is not None and gran == "turn":
        metrics["turn"] = scores(value / 2)
    return RetrievalRecord(
        question_id=qid,
        question_type=qtype,
        system=system,
        granularity=gran,
        ranked_ids=["x"],
        metrics=metrics,
        context_tokens={str(k): 10 * k for k in KS},
        **kw,
    )


ROWS = [
    row("q1", "temporal-reasoning", "hymem-summary", 1.0),
    row("q2", "multi-session", "hymem-summary", 0.5),
    row("q1", "temporal-reasoning", "bm25-session", 0.0),
    row("q2", "multi-session", "bm25-session", 1.0),
    row(
        "q3",
        "single-session-assistant",
        "hymem-summary",
        None,
        skipped={"session": "no evidence session", "turn": "no evidence turn"},
    ),
]
BASE: dict[str, Any] = {
    "ingest": [{"turns": 100, "seconds": 4.0, "segments": 10, "summaries": 20}],
    "skipped": [{"kind": "turn", "question_id": "q2", "item": "s_3", "reason": "empty content"}],
    "timing": [{"wall_seconds": 3.0}, {"wall_seconds": 5.5}],
    "selection": [{"question_id": "q9_abs", "abstention": True}, {"question_id": "q1"}],
}


def test_summary_averages_per_level_system_and_type() -> None:
    s = build_summary(retrieval=ROWS, predictions=[], manifest={"backend": "extractive"}, **BASE)
    sess = s["retrieval"]["levels"]["session"]
    assert sess["hymem-summary"]["overall"]["recall_any@5"] == pytest.approx(0.75)
    assert sess["hymem-summary"]["overall"]["n"] == 2
    assert sess["hymem-summary"]["by_type"]["multi-session"]["ndcg@10"] == 0.5
    assert sess["bm25-session"]["overall"]["recall_all@1"] == pytest.approx(0.5)
    turn = s["retrieval"]["levels"]["turn"]
    assert set(turn) == {"hymem-summary"}  # a session ranker has no turn level
    assert turn["hymem-summary"]["overall"]["recall_any@1"] == pytest.approx(0.375)
    assert s["retrieval"]["no_evidence"] == {"session": ["q3"], "turn": ["q3"]}
    assert s["retrieval"]["context_tokens"]["bm25-session"]["5"] == 50
    assert s["ingestion"]["turns_per_second"] == 25.0
    assert s["wall_seconds"] == {"invocations": 2, "total": 8.5, "last": 5.5}
    assert s["skipped"]["turns"] == 1 and s["abstention"] == 1 and s["qa"] is None


def test_report_has_baselines_beside_hymem_by_type_and_says_qa_needs_a_model() -> None:
    s = build_summary(retrieval=ROWS, predictions=[], manifest={"backend": "extractive"}, **BASE)
    report = render_report(s)
    assert report.startswith("# LongMemEval evaluation — extractive (no LLM)")
    assert "## Retrieval, session level (2 questions with session evidence)" in report
    assert "| hymem-summary (turn) | 75.00 |" in report
    assert "| bm25-session (session) | 50.00 |" in report
    assert "| System (unit) | Multi-session | Temporal | Overall |" in report
    assert "| hymem-summary (turn) | 50.00 | 100.00 | 75.00 |" in report
    assert "QA needs a model" in report
    assert "questions without session-level evidence: 1 (q3)" in report
    assert "| 1 | 100 | 4.0 | 25.0 | 10 | 20 |" in report
    assert "Wall time: 8.5 s over 2 invocation(s)" in report


def prediction(system: str, qid: str, qtype: str, correct: bool, **kw: Any) -> LmePrediction:
    return LmePrediction(
        system=system,
        question_id=qid,
        question_type=qtype,
        question="q?",
        gold="g",
        prediction="p",
        judge_correct=correct,
        judge_label="CORRECT" if correct else "WRONG",
        context_tokens=100,
        **kw,
    )


def test_qa_accuracy_per_type_with_abstention_apart() -> None:
    preds = [
        prediction("hymem", "q1", "temporal-reasoning", True, path="light"),
        prediction("hymem", "q2", "temporal-reasoning", False, path="deep", escalated=True),
        prediction("hymem", "q3_abs", "multi-session", True, abstention=True, path="light"),
        prediction("bm25-turn", "q1", "temporal-reasoning", False),
    ]
    manifest = {"backend": "openai:m", "judge": "openai:j"}
    s = build_summary(retrieval=ROWS, predictions=preds, manifest=manifest, **BASE)
    hymem = s["qa"]["hymem"]
    assert hymem["accuracy"] == pytest.approx(2 / 3)
    assert hymem["by_type"]["temporal-reasoning"] == 0.5
    assert hymem["abstention"] == 1.0 and hymem["escalation_rate"] == pytest.approx(1 / 3)
    report = render_report(s)
    assert "Judge: `openai:j`" in report and "QA needs a model" not in report
    assert "| hymem | 50.00 | 100.00 | 66.67 | 100 | 3 |" in report


def _cut(budget: int, tokens: int, session: float | None, turn: float | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    metrics = {}
    if session is not None:
        metrics["session"] = {"recall_any": session, "recall_all": session / 2}
    if turn is not None:
        metrics["turn"] = {"recall_any": turn, "recall_all": 0.0}
    return MatchedBudget(
        budget=budget, tokens=tokens, units=kw.pop("units", 2), metrics=metrics, **kw
    )


MATCHED_ROWS = [
    row(
        "q1",
        "temporal-reasoning",
        "hymem-light",
        1.0,
        matched={"hymem-light": _cut(200, 200, 1.0, 1.0)},
    ),
    row(
        "q2", "multi-session", "hymem-light", 1.0, matched={"hymem-light": _cut(100, 100, 0.0, 0.0)}
    ),
    row(
        "q1",
        "temporal-reasoning",
        "bm25-turn",
        1.0,
        matched={"hymem-light": _cut(200, 190, 1.0, 0.0)},
    ),
    row(
        "q2",
        "multi-session",
        "bm25-turn",
        1.0,
        matched={"hymem-light": _cut(100, 0, 0.0, 0.0, units=0, first_over=True)},
    ),
    row(
        "q1",
        "temporal-reasoning",
        "dense-session",
        1.0,
        matched={"hymem-light": _cut(200, 150, 1.0)},
    ),
    # written before any context row of its question: no matched cut, so not counted
    row("q2", "multi-session", "dense-session", 1.0),
]


def test_matched_budget_summary_and_table_by_type() -> None:
    s = build_summary(retrieval=MATCHED_ROWS, predictions=[], manifest={}, **BASE)
    matched = s["retrieval"]["matched"]
    assert set(matched) == {"hymem-light"}  # no hymem-deep rows
    light = matched["hymem-light"]
    assert light["budget_tokens"] == 150 and light["questions"] == 2
    assert list(light["systems"]) == ["hymem-light", "bm25-turn", "dense-session"]
    bm25 = light["systems"]["bm25-turn"]["overall"]
    assert bm25["session_recall_any"] == 0.5 and bm25["turn_recall_any"] == 0.0
    assert bm25["tokens"] == 95 and bm25["first_over"] == 1 and bm25["n"] == 2
    dense = light["systems"]["dense-session"]
    assert dense["overall"]["n"] == 1 and dense["overall"]["turn_recall_any"] is None
    assert list(dense["by_type"]) == ["temporal-reasoning"]
    report = render_report(s)
    assert "## Retrieval at hymem's cost: recall at matched token budgets" in report
    assert "### At hymem-light's budget (mean 150 tokens; 2 questions, 0 with an empty" in report
    assert (
        "| System (unit) | Multi-session | Temporal | Session any | Session all | Turn any "
        "| Turn all | Tokens used | Units | First over | n |"
    ) in report
    assert (
        "| hymem-light (turn) | 0.00 (100) | 100.00 (200) | 50.00"
        " | 25.00 | 50.00 | 0.00 | 150 | 2.0 | – | 2 |" in report
    )
    assert (
        "| bm25-turn (turn) | 0.00 (0) | 100.00 (190) | 50.00"
        " | 25.00 | 0.00 | 0.00 | 95 | 1.0 | 1 | 2 |" in report
    )
    assert (
        "| dense-session (session) | – | 100.00 (150) | 100.00"
        " | 50.00 | – | – | 150 | 2.0 | 0 | 1 |" in report
    )
    assert "matched token budgets" not in render_report(
        build_summary(retrieval=ROWS, predictions=[], manifest={}, **BASE)
    )


def test_the_report_of_an_extractive_run_names_extractive_cost() -> None:
    """Issue 49, item 15: no model ran, so no column says "Model"."""
    s = build_summary(retrieval=ROWS, predictions=[], manifest={"backend": "extractive"}, **BASE)
    md = render_report(s)
    assert "| Extractive calls | Extractive tokens |" in md and "Model calls" not in md
