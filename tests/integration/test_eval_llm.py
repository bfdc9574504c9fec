"""The harness against a model server (the scripted OpenAI-compatible one on 127.0.0.1, real
`openai` client): every prompt sent, for ingestion, every system and the judge, is free of the
dataset's annotations; judge accuracy is reported; the run is labelled with the model, not as
extractive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.evaluation.runner import RunOptions, run_locomo

from tests.doubles import summarise_reply
from tests.fixtures_eval import CANARY, EVAL_MINI

pytestmark = pytest.mark.integration


def test_prompts_never_carry_annotations_and_judge_is_reported(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.add_rule(role="summarise", reply=summarise_reply)
    llm_server.add_rule(role="light_answer", reply={"answer": "Oscar", "complete": False})
    llm_server.add_rule(role="select", reply={"ids": []})
    llm_server.add_rule(role="deep_answer", reply={"answer": "Oscar"})
    llm_server.add_rule(role="reflect", reply={"complete": True, "new_question": None})
    llm_server.add_rule(role="judge", match="puppy", reply={"label": "CORRECT"})
    llm_server.add_rule(role="judge", reply={"label": "WRONG"})
    cfg = MemoryConfig.defaults(
        llm="openai:test-model",
        llm_base_url=llm_server.base_url,
        llm_api_key="test-key",
        embedder="hashing",
        llm_timeout_s=10.0,
    )
    out = tmp_path / "run"
    res = run_locomo(
        RunOptions(
            dataset=EVAL_MINI,
            out=out,
            systems=["hymem", "full-context", "naive-rag-k3"],
            judge="openai:test-model",
            workers=2,
            adversarial=True,
        ),
        cfg,
        show_progress=False,
    )
    assert res.failed == 0 and res.asked == 3 * 9

    roles_seen = {role for role, _ in llm_server.requests}
    assert {"summarise", "light_answer", "deep_answer", "reflect", "judge"} <= roles_seen
    for role, body in llm_server.requests:
        assert CANARY not in json.dumps(body), f"annotation text reached the {role} prompt"
    # The turns themselves did reach the model, image captions included.
    sent = json.dumps([b for r, b in llm_server.requests if r == "summarise"])
    assert "rainbow flag" in sent and "dance studio" in sent

    preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    oscar = [p for p in preds if p["question"] == "What is the name of Caroline's puppy?"]
    assert {p["judge_correct"] for p in oscar} == {True} and all(p["f1"] == 1.0 for p in oscar)
    assert all(CANARY not in json.dumps(p) for p in preds)
    hymem = [p for p in preds if p["system"] == "hymem"]
    assert all(p["escalated"] and p["light_calls"] >= 1 and p["deep_calls"] >= 1 for p in hymem)

    summary = json.loads((out / "summary.json").read_text())
    assert summary["label"] == "openai:test-model" and not summary["extractive"]
    assert summary["systems"]["hymem"]["judge"]["single_hop"] == pytest.approx(1 / 5)
    assert summary["construction"]["per_conversation"][0]["calls"] >= 1
    report = (out / "report.md").read_text()
    assert "extractive (no LLM)" not in report
    assert "## LLM-judge accuracy (judge: openai:test-model)" in report
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["prompt_versions"]["judge"] and manifest["prompt_versions"]["summarise"]
    assert "test-key" not in (out / "manifest.json").read_text()
