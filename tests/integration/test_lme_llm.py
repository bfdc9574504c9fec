"""The LongMemEval harness with a model (the scripted OpenAI-compatible server on 127.0.0.1,
real `openai` client): hymem and a flat baseline answer every question, abstention included,
and each answer is graded by its question type's own judge prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.evaluation.longmemeval.runner import LmeOptions, run_longmemeval

from tests.doubles import summarise_reply
from tests.fixtures_lme import LME_ABSTENTION, LME_MINI

pytestmark = pytest.mark.integration

# A sentence only each judge prompt's instructions hold, so a request shows which was used.
PROMPT_MARKS = {
    "judge_lme_temporal": "off by one are still CORRECT",
    "judge_lme_update": "knowledge-update questions",
    "judge_lme_abstention": "abstention",
    "judge_lme_default": "single-session and",
}


def system_text(body: dict[str, Any]) -> str:
    return " ".join(str(m["content"]) for m in body["messages"] if m["role"] == "system")


def test_answers_are_judged_per_question_type(tmp_path: Path, llm_server: Any) -> None:
    llm_server.add_rule(role="summarise", reply=summarise_reply)
    llm_server.add_rule(role="light_answer", reply={"answer": "I do not know", "complete": True})
    llm_server.add_rule(role="deep_answer", reply={"answer": "I do not know"})
    llm_server.add_rule(role="select", reply={"ids": []})
    llm_server.add_rule(role="reflect", reply={"complete": True, "new_question": None})
    # Only the abstention prompt accepts "I do not know".
    llm_server.add_rule(role="judge", match="cannot be answered", reply={"label": "CORRECT"})
    llm_server.add_rule(role="judge", reply={"label": "WRONG"})
    cfg = MemoryConfig.defaults(
        llm="openai:test-model",
        llm_base_url=llm_server.base_url,
        llm_api_key="test-key",
        embedder="hashing",
        llm_timeout_s=10.0,
    )
    out = tmp_path / "run"
    options = LmeOptions(
        dataset=LME_MINI,
        out=out,
        systems=["hymem-summary", "bm25-session"],
        judge="openai:test-model",
        workers=2,
        qa_k=2,
    )
    res = run_longmemeval(options, cfg, show_progress=False)
    assert res.qa and res.failed == 0 and res.asked == 2 * 6
    assert LME_ABSTENTION in res.ingested  # with a model, abstention questions are asked

    preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert {p["system"] for p in preds} == {"hymem", "bm25-session"}
    by_q = {(p["system"], p["question_id"]): p for p in preds}
    assert by_q[("hymem", LME_ABSTENTION)]["judge_correct"] is True
    assert by_q[("hymem", "q_tr_04")]["judge_prompt"] == "judge_lme_temporal@2"
    assert by_q[("hymem", "q_tr_04")]["judge_correct"] is False
    assert by_q[("hymem", "q_tr_04")]["question_date"] == "2023/10/30 (Mon) 18:20"
    assert by_q[("bm25-session", "q_ms_02")]["context_tokens"] > 0
    assert len(by_q[("bm25-session", "q_ms_02")]["retrieved_turn_ids"]) == 2

    judged = [system_text(b) for b in llm_server.requests_for("judge")]
    assert len(judged) == 12
    for prompt, mark in PROMPT_MARKS.items():
        assert sum(mark in text for text in judged) >= 2, prompt

    summary = json.loads((out / "summary.json").read_text())
    assert summary["label"] == "openai:test-model" and not summary["extractive"]
    assert summary["qa"]["hymem"]["abstention"] == 1.0
    assert summary["qa"]["hymem"]["accuracy"] == pytest.approx(1 / 6)
    report = (out / "report.md").read_text()
    assert "QA needs a model" not in report and "Judge: `openai:test-model`" in report
    assert (out / "traces.jsonl").read_text().strip()  # hymem's asks, for the dashboard
