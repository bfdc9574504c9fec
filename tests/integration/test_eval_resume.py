"""Resumability and fault tolerance of the harness: real LanceDB, Tantivy and MiniLM.

An interrupted run (here: a first run cut short by --limit-questions, and a run whose model
fails on some questions) is finished by rerunning into the same folder: finished questions are
not asked again, ingestion is not repeated, and the counts add up."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError, LLMUnavailable
from hymem.embed.embedders import resolve_embedder
from hymem.evaluation.runner import RunOptions, run_locomo
from hymem.llm import build_roles

from tests.fixtures_eval import EVAL_MINI, MINI_QUESTIONS

pytestmark = pytest.mark.integration


class FlakyRoles:
    """Real roles whose deep_answer fails the first `failures` calls, as an overloaded server
    would after retries. Injected through the constructor, no patching."""

    def __init__(self, inner: Any, failures: int) -> None:
        self._inner = inner
        self._left = failures
        self._lock = threading.Lock()
        self.label = inner.label

    def deep_answer(
        self, question: str, passages: list[Any], pool: list[str], *, now: Any = None
    ) -> Any:
        with self._lock:
            fail = self._left > 0
            self._left -= 1 if fail else 0
        if fail:
            raise LLMUnavailable("503 after retries", role="deep_answer", status_code=503)
        return self._inner.deep_answer(question, passages, pool, now=now)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def options(out: Path, **kw: Any) -> RunOptions:
    base = {
        "dataset": EVAL_MINI,
        "out": out,
        "workers": 2,
        "retrieval_eval": False,
        "dashboard": False,
    }
    base.update(kw)
    return RunOptions(**base)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_interrupted_run_resumes_without_reasking(tmp_path: Path, minilm: Any) -> None:
    # The smaller conversation only: MiniLM on a shared 2-core machine is the slow part.
    out = tmp_path / "run"
    cfg = MemoryConfig.defaults()
    systems = ["hymem", "naive-rag-k3"]
    conv = ["conv-mini-2"]  # 3 turns, 2 questions
    first = run_locomo(
        options(out, systems=systems, conversations=conv, limit_questions=1),
        cfg,
        embedder=minilm,
        show_progress=False,
    )
    assert (first.asked, first.skipped, first.failed) == (2, 0, 0)
    assert first.ingested == ["conv-mini-2"]
    before = lines(out / "predictions.jsonl")
    with Memory(out / "store", config=cfg, embedder=minilm, read_only=True) as mem:
        turns_before = {k: v for k, v in mem.stats().items() if k != "traces"}

    second = run_locomo(
        options(out, systems=systems, conversations=conv),
        cfg,
        embedder=minilm,
        show_progress=False,
    )
    assert (second.asked, second.skipped, second.failed) == (2, 2, 0)
    assert second.ingested == []  # the store already held the conversation
    after = lines(out / "predictions.jsonl")
    assert after[: len(before)] == before and len(after) == 4
    keys = {(r["system"], r["conversation"], r["qa_index"]) for r in map(json.loads, after)}
    assert len(keys) == len(after)
    with Memory(out / "store", config=cfg, embedder=minilm, read_only=True) as mem:
        counts = {k: v for k, v in mem.stats().items() if k != "traces"}
        assert counts == turns_before  # nothing ingested twice
        # One trace per hymem question ever asked: none of the first run's was asked again.
        assert len(mem.traces()) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["systems"]["hymem"]["n"] == 2

    third = run_locomo(
        options(out, systems=systems, conversations=conv),
        cfg,
        embedder=minilm,
        show_progress=False,
    )
    assert (third.asked, third.skipped) == (0, 4)

    with pytest.raises(ConfigError, match="sleep"):
        run_locomo(
            options(out, systems=systems, conversations=conv, sleep=True),
            cfg,
            embedder=minilm,
            show_progress=False,
        )


def test_model_failures_lose_nothing_and_are_retried(tmp_path: Path) -> None:
    # The fault path does not depend on the embedder: the fast hashing one keeps this quick.
    out = tmp_path / "run"
    cfg = MemoryConfig.defaults(embedder="hashing")
    embedder = resolve_embedder("hashing")
    flaky = FlakyRoles(build_roles(cfg, embedder), failures=3)
    first = run_locomo(
        options(out, systems=["full-context"], sleep=True),
        cfg,
        embedder=embedder,
        roles=flaky,
        show_progress=False,
    )
    assert (first.asked, first.failed) == (MINI_QUESTIONS - 3, 3)
    assert len(lines(out / "predictions.jsonl")) == MINI_QUESTIONS - 3
    assert (out / "report.md").exists()  # partial results are still reported
    cost = json.loads((out / "ingest" / "conv-mini-1.json").read_text())
    assert cost["sleep"]["summaries_scanned"] > 0 and cost["turns"] == 10

    second = run_locomo(
        options(out, systems=["full-context"], sleep=True),
        cfg,
        embedder=embedder,
        show_progress=False,
    )
    assert (second.asked, second.skipped, second.failed) == (3, MINI_QUESTIONS - 3, 0)
    assert len(lines(out / "predictions.jsonl")) == MINI_QUESTIONS


class DownSummariser:
    """Real roles whose summariser is down: ingestion cannot finish."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.label = inner.label

    def summarise(self, segments: list[Any]) -> Any:
        raise LLMUnavailable("connection refused", role="summarise")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_interrupted_ingestion_is_finished_on_rerun_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = MemoryConfig.defaults(embedder="hashing", summarise_fallback=False)
    embedder = resolve_embedder("hashing")
    opts = options(out, systems=["hymem"], conversations=["conv-mini-2"])
    with pytest.raises(LLMUnavailable, match="pending"):
        run_locomo(
            opts,
            cfg,
            embedder=embedder,
            roles=DownSummariser(build_roles(cfg, embedder)),
            show_progress=False,
        )
    assert not (out / "ingest" / "conv-mini-2.json").exists()  # not marked complete
    with Memory(out / "store", config=cfg, embedder=embedder, read_only=True) as mem:
        assert len(mem.pending(user_id="conv-mini-2")) == 3  # accepted turns were kept

    res = run_locomo(opts, cfg, embedder=embedder, show_progress=False)
    assert res.ingested == ["conv-mini-2"] and (res.asked, res.failed) == (2, 0)
    with Memory(out / "store", config=cfg, embedder=embedder, read_only=True) as mem:
        assert mem.stats(user_id="conv-mini-2")["turns"] == 3  # re-fed turns were not duplicated
        assert mem.pending(user_id="conv-mini-2") == []


def test_date_phrasing_is_recorded_and_fixed_for_a_run(tmp_path: Path) -> None:
    """`--phrasing` is an evaluation choice: the manifest and report say which wording the
    extractive backend used, and a run folder never mixes the two."""
    out = tmp_path / "run"
    cfg = MemoryConfig.defaults(embedder="hashing")
    embedder = resolve_embedder("hashing")
    mini = {"systems": ["hymem"], "conversations": ["conv-mini-2"]}
    run_locomo(
        options(out, phrasing="general", **mini), cfg, embedder=embedder, show_progress=False
    )
    assert json.loads((out / "manifest.json").read_text())["phrasing"] == "general"
    assert "hymem's own wording" in (out / "report.md").read_text()
    with pytest.raises(ConfigError, match="phrasing"):
        run_locomo(options(out, **mini), cfg, embedder=embedder, show_progress=False)
