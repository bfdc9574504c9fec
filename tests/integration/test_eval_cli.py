"""`hymem eval locomo` end to end on the tiny fixture (extractive backend, hashing embedder,
real LanceDB and Tantivy), then `hymem dashboard` over the run's store and folder."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hymem.cli import app
from hymem.core.errors import UserInputError
from hymem.evaluation.systems import ALL_SYSTEMS
from typer.testing import CliRunner

from tests.fixtures_eval import CANARY, EVAL_MINI, MINI_QUESTIONS_ADVERSARIAL

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "run"
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "locomo",
            str(EVAL_MINI),
            "--embedder",
            "hashing",
            "--llm",
            "extractive",
            "--out",
            str(out),
            "--workers",
            "2",
            "--adversarial",
        ],
    )
    assert res.exit_code == 0, (res.output, res.exception)
    return out


def test_all_outputs_written(cli_run: Path) -> None:
    for name in (
        "manifest.json",
        "predictions.jsonl",
        "summary.json",
        "report.md",
        "dashboard.html",
        "retrieval.json",
        "traces.jsonl",
    ):
        assert (cli_run / name).is_file(), name
    preds = [json.loads(line) for line in (cli_run / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == len(ALL_SYSTEMS) * MINI_QUESTIONS_ADVERSARIAL
    assert {p["system"] for p in preds} == set(ALL_SYSTEMS)
    assert {p["category"] for p in preds} == {1, 2, 3, 4, 5}
    assert all(p["backend"] == "extractive" for p in preds)
    # The fixture's first question is answered verbatim by the light path.
    first = next(
        p
        for p in preds
        if p["system"] == "hymem" and p["qa_index"] == 0 and p["conversation"] == "conv-mini-1"
    )
    assert first["f1"] == 1.0 and first["path"] == "light" and not first["escalated"]
    assert "D1:1" in first["retrieved_turn_ids"] and first["evidence_recall"] == 1.0
    full = [p for p in preds if p["system"] == "full-context"]
    assert all(p["evidence_recall"] in (1.0, None) for p in full)
    assert all(p["path"] == "deep" for p in preds if p["system"] == "deep-only")
    assert all(p["reflect_calls"] == 0 for p in preds if p["system"] == "no-reflection")
    assert all(not p["escalated"] for p in preds if p["system"] == "light-only")


def test_summary_manifest_and_report(cli_run: Path) -> None:
    summary = json.loads((cli_run / "summary.json").read_text())
    assert summary["label"] == "extractive (no LLM)"
    assert set(summary["systems"]) == set(ALL_SYSTEMS)
    hy = summary["systems"]["hymem"]
    assert hy["n"] == MINI_QUESTIONS_ADVERSARIAL and 0.0 <= hy["escalation_rate"] <= 1.0
    assert {"single_hop", "multi_hop", "open_domain", "temporal", "overall"} <= set(hy["f1"])
    assert len(summary["construction"]["per_conversation"]) == 2
    assert summary["construction"]["per_conversation"][0]["turns"] == 10
    rows = summary["retrieval"]["rows"]
    assert {(r["level"], r["mode"], r["credit"], r["k"]) for r in rows} == {
        (lvl, mode, credit, k)
        for lvl, credit in (
            ("summary", "source"),
            ("summary", "segment"),
            ("segment", "source"),
            ("turn", "source"),
        )
        for mode in ("hybrid", "dense", "lexical")
        for k in (5, 10)
    }
    summaries = [r for r in rows if r["level"] == "summary"]
    honest = {(r["mode"], r["k"]): r["recall"] for r in summaries if r["credit"] == "source"}
    generous = {(r["mode"], r["k"]): r["recall"] for r in summaries if r["credit"] == "segment"}
    assert all(honest[key] <= generous[key] for key in generous)  # a source turn is in its segment
    manifest = json.loads((cli_run / "manifest.json").read_text())
    assert manifest["dataset_sha256"] == hashlib.sha256(EVAL_MINI.read_bytes()).hexdigest()
    assert manifest["backend"] == "extractive" and manifest["embedder"] == "hashing-256"
    assert manifest["versions"]["python"] and manifest["versions"]["lancedb"]
    assert "llm_api_key" not in manifest["config"]
    report = (cli_run / "report.md").read_text()
    assert "# LoCoMo evaluation — extractive (no LLM)" in report
    assert (
        "| System | Avg context tokens | Single Hop | Multi Hop | Open Domain | Temporal" in report
    )
    for system in ALL_SYSTEMS:
        assert f"| {system} |" in report
    assert "## Retrieval only: evidence recall@k" in report
    assert "| Level | Mode | recall@5 | tokens@5 | recall@10 | tokens@10 |" in report
    assert "| Context tokens | Evidence recall |" in report


def test_every_recall_has_its_tokens_and_budgets_are_matched(cli_run: Path) -> None:
    retrieval = json.loads((cli_run / "retrieval.json").read_text())
    rows = {(r["level"], r["mode"], r["credit"], r["k"]): r for r in retrieval["rows"]}
    assert all(r["tokens"] > 0 for r in rows.values())
    # Smaller k is a prefix: it never costs more.
    assert all(rows[(*key[:3], 5)]["tokens"] <= r["tokens"] for key, r in rows.items())
    questions = retrieval["budget_questions"]
    assert len(questions) == retrieval["budget"]["questions"] == retrieval["questions"]
    for q in questions:
        for depth in ("light", "deep"):
            budget, systems = q[depth]["budget"], q[depth]["systems"]
            assert systems[f"hymem-{depth}"]["tokens"] == budget
            for name in ("dense-turn", "bm25-turn", "hybrid-turn"):
                cut = systems[name]
                assert cut["tokens"] <= budget, (q, name)
                assert not cut["first_over"] or (cut["units"] == 0 and cut["tokens"] == 0)
    light = retrieval["budget"]["depths"]["light"]
    # The light path reads the top hybrid summaries, a repeat of a turn replaced by the next
    # hit: it covers every turn of the recall@10 row's own hits, and maybe more.
    top10 = rows[("summary", "hybrid", "source", 10)]
    assert light["systems"]["hymem-light"]["recall"] >= top10["recall"] - 1e-9
    assert set(light["systems"]["dense-turn"]["by_category"]) <= {
        "single_hop",
        "multi_hop",
        "open_domain",
        "temporal",
        "adversarial",
    }
    summary = json.loads((cli_run / "summary.json").read_text())
    assert "budget_questions" not in summary["retrieval"] and summary["retrieval"]["budget"]
    report = (cli_run / "report.md").read_text()
    assert "## Retrieval at hymem's cost: evidence recall at matched token budgets" in report
    for depth in ("light", "deep"):
        mean_budget = retrieval["budget"]["depths"][depth]["budget_tokens"]
        assert f"### At hymem's {depth} budget (mean {mean_budget:,.0f} tokens;" in report
    assert "| dense-turn (naive RAG's ranking) |" in report


def test_canary_from_annotations_never_reaches_outputs_or_store(cli_run: Path) -> None:
    for path in cli_run.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


def test_dashboard_command_over_store_traces_and_run(cli_run: Path, tmp_path: Path) -> None:
    page = tmp_path / "dash.html"
    res = CliRunner().invoke(
        app,
        [
            "dashboard",
            "--traces",
            str(cli_run / "store"),
            "--runs",
            str(cli_run),
            "--out",
            str(page),
        ],
    )
    assert res.exit_code == 0, (res.output, res.exception)
    text = page.read_text()
    assert 'data-source="traces"' in text and 'data-source="run/hymem"' in text
    assert 'id="chart-escalation-category"' in text
    assert CANARY not in text
    assert "<table id='memory-health'>" in text  # issue 30: the store's memory health
    # issue 33: each of the store's asks linked to its replay command
    assert "<table id='recent-asks'>" in text
    store = str(cli_run / "store")
    assert re.search(rf"hymem replay [0-9a-f]{{32}} -u \S+ --store {re.escape(store)}", text)


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "locomo",
            str(EVAL_MINI),
            "--embedder",
            "hashing",
            "--conversations",
            "conv-nope",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert isinstance(res.exception, UserInputError) and "conv-nope" in str(res.exception)
    res = CliRunner().invoke(
        app, ["eval", "locomo", str(tmp_path / "missing.json"), "--out", str(tmp_path / "r2")]
    )
    assert isinstance(res.exception, UserInputError)
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "locomo",
            str(EVAL_MINI),
            "--embedder",
            "hashing",
            "--systems",
            "hymem,bogus",
            "--out",
            str(tmp_path / "r3"),
        ],
    )
    assert isinstance(res.exception, UserInputError) and "bogus" in str(res.exception)
    res = CliRunner().invoke(app, ["dashboard", "--out", str(tmp_path / "d.html")])
    assert isinstance(res.exception, UserInputError)
