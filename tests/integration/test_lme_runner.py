"""`run_longmemeval` end to end on the tiny fixture (extractive backend, hashing embedder, real
LanceDB and Tantivy): outputs, the .json.gz twin, resumption after an interruption, and bad
input contained to the item it damages."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.dashboard import render_dashboard
from hymem.evaluation.longmemeval.records import RetrievalRecord
from hymem.evaluation.longmemeval.runner import LmeOptions, LmeRunResult, run_longmemeval
from hymem.evaluation.longmemeval.systems import CONTEXT_SYSTEMS, FLAT_SYSTEMS, RETRIEVAL_SYSTEMS
from hymem.evaluation.predictions import read_predictions

from tests.fixtures_lme import LME_ABSTENTION, LME_MINI, LME_SCORED

pytestmark = pytest.mark.integration

Variant = Callable[[Callable[[list[dict[str, Any]]], None]], Path]


class SpyEmbedder(HashingEmbedder):
    """The hashing embedder, remembering every text it embedded."""

    def __init__(self) -> None:
        super().__init__(256)
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def run(dataset: Path, out: Path, embedder: Any = None, **kw: Any) -> LmeRunResult:
    options = LmeOptions(dataset=dataset, out=out, dashboard=kw.pop("dashboard", False), **kw)
    return run_longmemeval(
        options,
        MemoryConfig.defaults(embedder="hashing"),
        embedder=embedder or HashingEmbedder(256),
        show_progress=False,
    )


def rows(out: Path) -> list[RetrievalRecord]:
    return read_predictions(out / "retrieval.jsonl", RetrievalRecord)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LmeRunResult]:
    out = tmp_path_factory.mktemp("lme") / "run"
    return out, run(LME_MINI, out, dashboard=True)


def test_every_output_is_written(full_run: tuple[Path, LmeRunResult]) -> None:
    out, res = full_run
    for name in (
        "manifest.json",
        "summary.json",
        "report.md",
        "retrieval.jsonl",
        "predictions.jsonl",
        "dashboard.html",
        "timing.jsonl",
    ):
        assert (out / name).is_file(), name
    # Abstention questions are neither scored nor, without a model, ingested.
    assert res.ingested == LME_SCORED and not res.qa and res.asked == 0
    assert {(r.question_id, r.system) for r in rows(out)} == {
        (q, s) for q in LME_SCORED for s in RETRIEVAL_SYSTEMS
    }
    assert (out / "predictions.jsonl").read_text() == ""
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmark"] == "longmemeval"
    assert manifest["prompt_versions"]["judge_lme_temporal"] == "judge_lme_temporal@2"
    ingest = json.loads((out / "ingest" / "q_ms_02.json").read_text())
    assert ingest["turns"] == 15 and ingest["backend"] == "extractive"


def test_hymem_turns_map_back_to_benchmark_ids(full_run: tuple[Path, LmeRunResult]) -> None:
    out, _ = full_run
    by_key = {(r.question_id, r.system): r for r in rows(out)}
    summary_row = by_key[("q_ssu_01", "hymem-summary")]
    assert summary_row.ranked_ids[0].startswith("sum-")
    # a summary maps to the turns it quotes (benchmark ids), not to its whole segment
    assert summary_row.turn_ids[0].startswith("answer_ssu01_1_")
    assert summary_row.session_ids[0] == "answer_ssu01_1"
    assert summary_row.metrics["session"]["recall_any@5"] == 1.0
    # The assistant-evidence question is scored at turn level only, and says why.
    ssa = by_key[("q_ssa_05", "hymem-segment")]
    assert set(ssa.metrics) == {"turn"} and ssa.skipped["session"].startswith("no evidence")
    assert by_key[("q_ssa_05", "bm25-turn")].metrics["turn"]["recall_any@50"] == 0.0


def test_summary_report_and_dashboard(full_run: tuple[Path, LmeRunResult]) -> None:
    out, _ = full_run
    summary = json.loads((out / "summary.json").read_text())
    assert summary["retrieval"]["no_evidence"] == {"session": ["q_ssa_05"], "turn": []}
    assert summary["abstention"] == 1 and summary["selected"] == 6
    assert summary["ingestion"]["questions"] == 5 and summary["ingestion"]["turns_per_second"]
    session = summary["retrieval"]["levels"]["session"]
    assert list(session) == list(RETRIEVAL_SYSTEMS) and session["bm25-turn"]["overall"]["n"] == 4
    report = (out / "report.md").read_text()
    assert "QA needs a model" in report and "## Retrieval, turn level" in report
    assert "| hymem-summary (turn) |" in report and "| hybrid-session (session) |" in report
    html = (out / "dashboard.html").read_text()
    assert 'id="chart-retrieval"' in html and '"legendgroup":"run\\u002fhymem-summary"' in html
    assert "chart-retrieval" in render_dashboard(runs=[out])


def test_flat_baselines_are_cut_to_hymem_budgets(full_run: tuple[Path, LmeRunResult]) -> None:
    out, _ = full_run
    by_key = {(r.question_id, r.system): r for r in rows(out)}
    for qid in LME_SCORED:
        for context in CONTEXT_SYSTEMS:
            ctx = by_key[(qid, context)]
            budget = sum(ctx.unit_tokens)
            assert len(ctx.unit_tokens) == len(ctx.ranked_ids) and budget > 0
            own = ctx.matched[context]
            assert own.budget == own.tokens == budget and own.units == len(ctx.ranked_ids)
            for flat in FLAT_SYSTEMS:
                rec = by_key[(qid, flat)]
                cut = rec.matched[context]
                assert cut.budget == budget and cut.tokens <= budget
                assert not cut.first_over or (cut.units, cut.tokens) == (0, 0)
                ranking = rec.turn_ids if rec.granularity == "turn" else rec.ranked_ids
                # The cut is the longest prefix that fits (the fixture's rankings fit in 50).
                assert cut.tokens == sum(rec.unit_tokens[: cut.units])
                if cut.units < len(ranking):
                    assert cut.tokens + rec.unit_tokens[cut.units] > budget
    light = by_key[("q_ssu_01", "hymem-light")]
    assert light.ranked_ids and all(i.startswith("sum-") for i in light.ranked_ids)
    assert len(light.ranked_ids) <= 10  # the light path's k
    summary = json.loads((out / "summary.json").read_text())
    matched = summary["retrieval"]["matched"]
    assert list(matched) == list(CONTEXT_SYSTEMS)
    assert list(matched["hymem-deep"]["systems"]) == ["hymem-deep", *FLAT_SYSTEMS]
    report = (out / "report.md").read_text()
    assert "## Retrieval at hymem's cost: recall at matched token budgets" in report
    assert "### At hymem-light's budget (mean " in report and "| hymem-deep (turn) |" in report


def test_flat_rows_ranked_later_are_matched_to_the_stored_budgets(tmp_path: Path) -> None:
    out, qid = tmp_path / "run", "q_ms_02"
    run(LME_MINI, out, systems=list(CONTEXT_SYSTEMS), questions=[qid])
    budgets = {r.system: sum(r.unit_tokens) for r in rows(out)}
    again = run(LME_MINI, out, systems=[*CONTEXT_SYSTEMS, "bm25-turn"], questions=[qid])
    assert (again.ingested, again.ranked) == ([], 1)
    (bm25,) = [r for r in rows(out) if r.system == "bm25-turn"]
    assert {c: m.budget for c, m in bm25.matched.items()} == budgets


def test_json_gz_gives_the_same_baseline_scores(
    full_run: tuple[Path, LmeRunResult], lme_gz: Path, tmp_path: Path
) -> None:
    baselines = ["bm25-turn", "dense-session", "hybrid-turn"]
    run(lme_gz, tmp_path / "gz", systems=baselines, questions=["q_ms_02", "q_tr_04"])
    plain = {(r.question_id, r.system): r.metrics for r in rows(full_run[0])}
    for r in rows(tmp_path / "gz"):
        assert r.metrics == plain[(r.question_id, r.system)]
    assert len(rows(tmp_path / "gz")) == 6


def test_interrupted_run_resumes_without_reingesting(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run(LME_MINI, out, limit=2)
    assert first.ingested == ["q_ssu_01", "q_ms_02"] and first.ranked == 2 * len(RETRIEVAL_SYSTEMS)
    # Simulate a kill while q_ms_02 was being ranked: its ingest marker and rows are gone and
    # the last line of retrieval.jsonl is torn.
    (out / "ingest" / "q_ms_02.json").unlink()
    keep = [ln for ln in (out / "retrieval.jsonl").read_text().splitlines() if "q_ms_02" not in ln]
    (out / "retrieval.jsonl").write_text("\n".join(keep) + "\n" + keep[-1][:40])
    marker = (out / "ingest" / "q_ssu_01.json").read_text()
    spy = SpyEmbedder()
    second = run(LME_MINI, out, embedder=spy)
    assert second.ingested == ["q_ms_02", "q_ku_03", "q_tr_04", "q_ssa_05"]
    assert second.ranked == 4 * len(RETRIEVAL_SYSTEMS)
    # Nothing of the finished question's history was embedded again, nor its marker rewritten.
    assert not any("golden retriever puppy" in t for t in spy.texts)
    assert (out / "ingest" / "q_ssu_01.json").read_text() == marker
    assert len(rows(out)) == 5 * len(RETRIEVAL_SYSTEMS)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["wall_seconds"]["invocations"] == 2 and summary["retrieval"]["questions"] == 5
    third = run(LME_MINI, out)
    assert (third.ingested, third.ranked) == ([], 0)


def test_bad_items_are_counted_and_the_run_goes_on(lme_variant: Variant, tmp_path: Path) -> None:
    def damage(data: list[dict[str, Any]]) -> None:
        data[0]["question_date"] = "2023/06/20 (Mon) 09:15"  # wrong weekday: question skipped
        data[1]["haystack_dates"][1] = "June 8th"  # session dropped
        data[2]["haystack_sessions"][0][1]["content"] = ""  # empty turn: not ingested
        for session in data[3]["haystack_sessions"]:  # no evidence at either level
            for turn in session:
                turn["has_answer"] = False

    out = tmp_path / "run"
    res = run(lme_variant(damage), out, systems=["hymem-summary", "bm25-turn"])
    assert res.ingested == ["q_ms_02", "q_ku_03", "q_tr_04", "q_ssa_05"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["skipped"] | {"details": None} == {
        "questions": 1,
        "sessions": 1,
        "turns": 1,
        "details": None,
    }
    assert summary["retrieval"]["no_evidence"] == {
        "session": ["q_ssa_05", "q_tr_04"],
        "turn": ["q_tr_04"],
    }
    ku = json.loads((out / "ingest" / "q_ku_03.json").read_text())
    assert ku["turns"] == 9 and ku["turns_skipped"] == 1
    report = (out / "report.md").read_text()
    assert "questions of the file left out by the loader (malformed, bad date): 1" in report
    assert "question q_ssu_01 of q_ssu_01: date '2023/06/20 (Mon) 09:15'" in report
    assert "session sharegpt_laptop_02 of q_ms_02" in report
    # A question left out of the selection takes its session and turn skips with it.
    run(lme_variant(damage), tmp_path / "one", systems=["bm25-turn"], questions=["q_tr_04"])
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["skipped"] | {
        "details": None
    } == {"questions": 1, "sessions": 0, "turns": 0, "details": None}
    assert LME_ABSTENTION not in {r.question_id for r in rows(out)}


def test_rankings_go_deeper_than_max_k(tmp_path: Path) -> None:
    """hymem's rankings search as deep as the haystack needs (50 to 3,200 hits), whatever
    `max_k` bounds ordinary calls to. Before: the dev run stopped with k=3,200 > max_k."""
    options = LmeOptions(dataset=LME_MINI, out=tmp_path / "run", dashboard=False)
    config = MemoryConfig.defaults(embedder="hashing", max_k=30)
    result = run_longmemeval(options, config, embedder=HashingEmbedder(256), show_progress=False)
    assert result.ingested and rows(tmp_path / "run")
