"""Issue 28 ("the first hour"), case 4: rerunning `hymem eval locomo` into the same folder
reuses the retrieval-recall stage as it reuses ingestion and answers, recomputing only the
questions whose store state changed; every invocation's stage times reach timing.jsonl and the
report. Extractive backend, hashing embedder, real LanceDB and Tantivy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.retrieval_cache import FILENAME, run_parts
from hymem.evaluation.runner import RunOptions, RunResult, run_locomo
from hymem.evaluation.timing import STAGES

from tests.fixtures_eval import EVAL_MINI

pytestmark = pytest.mark.integration

SYSTEMS = ["hymem", "naive-rag-k3"]


def _run(out: Path) -> RunResult:
    return run_locomo(
        RunOptions(dataset=EVAL_MINI, out=out, systems=SYSTEMS, workers=2, dashboard=False),
        MemoryConfig.defaults(embedder="hashing"),
        embedder=HashingEmbedder(256),
        show_progress=False,
    )


def _questions_by_conversation(out: Path) -> dict[str, int]:
    rows = json.loads((out / "retrieval.json").read_text())["budget_questions"]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["conversation"]] = counts.get(r["conversation"], 0) + 1
    return counts


def test_rerun_reuses_retrieval_recall_and_rescored_only_a_changed_store(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _run(out)
    scored = json.loads((out / "retrieval.json").read_text())
    n = scored["questions"]
    assert n > 0 and (first.retrieval_computed, first.retrieval_reused) == (n, 0)
    assert set(first.stages) == {stage for stage, _ in STAGES}

    second = _run(out)
    assert (second.asked, second.ingested) == (0, [])
    assert (second.retrieval_computed, second.retrieval_reused) == (0, n)
    assert json.loads((out / "retrieval.json").read_text()) == scored  # same numbers, reused
    assert len((out / FILENAME).read_text().splitlines()) == n  # nothing appended

    timing = [json.loads(line) for line in (out / "timing.jsonl").read_text().splitlines()]
    assert [t["retrieval_reused"] for t in timing] == [0, n]
    report = (out / "report.md").read_text()
    assert "## Run time by stage (seconds)" in report
    assert "recall scored 0, reused " + str(n) + " questions" in report

    # The store changes under one conversation (a turn added after the run): only that
    # conversation's questions are searched again, and its stale rows leave the file.
    with Memory(out / "store", embedder=HashingEmbedder(256)) as mem:
        mem.add(
            [{"role": "user", "content": "One more thing: I adopted a second dog."}],
            user_id="conv-mini-1",
        )
        mem.flush(user_id="conv-mini-1")
    third = _run(out)
    per_conv = _questions_by_conversation(out)
    assert (third.retrieval_computed, third.retrieval_reused) == (
        per_conv["conv-mini-1"],
        per_conv["conv-mini-2"],
    )
    assert len((out / FILENAME).read_text().splitlines()) == n


def _manifest(**config: Any) -> dict[str, Any]:
    return {
        "config": MemoryConfig.defaults(**config).model_dump(mode="json", exclude={"llm_api_key"}),
        "embedder": "hashing-256",
        "dataset_sha256": "abc",
        "sleep": False,
        "versions": {"hymem": "0.1"},
    }


def test_retrieval_rows_are_keyed_by_what_changes_their_numbers() -> None:
    base = run_parts(_manifest(), (5, 10))
    assert run_parts(_manifest(), (10, 5)) == base
    assert run_parts(_manifest(llm_timeout_s=99.0), (5, 10)) == base  # operational only
    assert run_parts(_manifest(rrf_k=7), (5, 10)) != base
    assert run_parts({**_manifest(), "embedder": "minilm"}, (5, 10)) != base
    assert run_parts({**_manifest(), "sleep": True}, (5, 10)) != base
    assert run_parts(_manifest(), (5,)) != base
