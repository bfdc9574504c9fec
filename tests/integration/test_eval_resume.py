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


# --- interrupted, then resumed: the same report as a clean run -----------------------------


class StopAtSummarise:
    """Real roles whose `at`-th summariser call is interrupted, as a Ctrl-C during a model
    call is. Injected through the constructor, no patching."""

    def __init__(self, inner: Any, at: int) -> None:
        self._inner = inner
        self._left = at
        self.label = inner.label

    def summarise(self, segments: list[Any]) -> Any:
        self._left -= 1
        if self._left == 0:
            raise KeyboardInterrupt
        return self._inner.summarise(segments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def repeating_dataset(folder: Path) -> Path:
    """The mini fixture, with a fourth session of conv-mini-1 that repeats its first: write-time
    consolidation then replaces summaries, which leaves deleted documents in the BM25 index."""
    data = json.loads(EVAL_MINI.read_text(encoding="utf-8"))
    conv = data[0]["conversation"]
    assert data[0]["sample_id"] == "conv-mini-1" and "session_4" not in conv
    conv["session_4_date_time"] = "10:00 am on 1 August, 2023"
    conv["session_4"] = [
        dict(t, dia_id=t["dia_id"].replace("D1:", "D4:")) for t in conv["session_1"]
    ]
    path = folder / "locomo_repeating.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def lexical_scores(store: Path, cfg: MemoryConfig, embedder: Any, dataset: Path) -> list[Any]:
    """Every question's BM25 hits (id -> score) at both levels, read from a finished run."""
    scores: list[Any] = []
    with Memory(store, config=cfg, embedder=embedder, read_only=True) as mem:
        for conv in json.loads(dataset.read_text(encoding="utf-8")):
            for qa in conv["qa"]:
                for level in ("summary", "segment"):
                    hits = mem.search(
                        qa["question"], user_id=conv["sample_id"], k=10, level=level, mode="lexical"
                    )
                    scores.append({h.id: h.lexical_score for h in hits})
    return scores


COST_COUNTS = ("conversation", "turns", "segments", "summaries", "calls", "tokens")


def cost_rows(out: Path) -> list[dict[str, Any]]:
    rows = json.loads((out / "summary.json").read_text())["construction"]["per_conversation"]
    return [{k: r[k] for k in COST_COUNTS} for r in rows]


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One uninterrupted run over the repeating fixture: (dataset, run folder)."""
    folder = tmp_path_factory.mktemp("clean")
    dataset = repeating_dataset(folder)
    embedder = resolve_embedder("hashing")
    cfg = MemoryConfig.defaults(embedder="hashing")
    run_locomo(resume_options(folder / "run", dataset), cfg, embedder=embedder, show_progress=False)
    return dataset, folder / "run"


def resume_options(out: Path, dataset: Path) -> RunOptions:
    return options(out, dataset=dataset, systems=["hymem"], workers=1, retrieval_eval=True)


@pytest.mark.parametrize("where", ["summarise", "commit"])
def test_interrupted_then_resumed_run_reports_what_a_clean_run_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_run: tuple[Path, Path], where: str
) -> None:
    """A Ctrl-C in a summariser call (conv-mini-1's third of four) or inside a commit's last
    step (conv-mini-2's, after Tantivy took it, before its turns are marked stored), then a
    rerun: the construction-cost counts are a clean run's (not only the resumed part's), and
    BM25 scores are a clean run's (a rolled-back commit rebuilds the index mid-run, dropping
    the deleted documents a clean run still counts)."""
    from hymem.evaluation.locomo_format import phrased_roles
    from hymem.indexes.lance.turn_log import TurnLog

    dataset, clean = clean_run
    out = tmp_path / "run"
    cfg = MemoryConfig.defaults(embedder="hashing")
    embedder = resolve_embedder("hashing")
    roles = phrased_roles(cfg, embedder, "locomo")  # what run_locomo builds for itself
    assert roles is not None
    if where == "summarise":
        stopping: Any = StopAtSummarise(roles, at=3)
    else:
        stopping = roles
        set_status = TurnLog.set_status

        def stop_once(self: TurnLog, user_id: str, *args: Any, **kwargs: Any) -> Any:
            if user_id == "conv-mini-2":
                monkeypatch.setattr(TurnLog, "set_status", set_status)
                raise KeyboardInterrupt
            return set_status(self, user_id, *args, **kwargs)

        monkeypatch.setattr(TurnLog, "set_status", stop_once)
    with pytest.raises(KeyboardInterrupt):
        run_locomo(
            resume_options(out, dataset),
            cfg,
            embedder=embedder,
            roles=stopping,
            show_progress=False,
        )
    roles.close()
    cut = "conv-mini-1" if where == "summarise" else "conv-mini-2"
    assert not (out / "ingest" / f"{cut}.json").exists()
    assert (out / "ingest" / "partial" / f"{cut}.json").exists()  # what the first part spent

    resumed = run_locomo(resume_options(out, dataset), cfg, embedder=embedder, show_progress=False)
    assert cut in resumed.ingested
    assert not (out / "ingest" / "partial").exists()
    assert cost_rows(out) == cost_rows(clean)
    parts = {
        r["conversation"]: r["parts"]
        for r in json.loads((out / "summary.json").read_text())["construction"]["per_conversation"]
    }
    assert parts[cut] == 2 and set(parts.values()) <= {1, 2}
    assert f"Resumed after an interruption: {cut}." in (out / "report.md").read_text()
    assert "Resumed" not in (clean / "report.md").read_text()

    got = lexical_scores(out / "store", cfg, embedder, dataset)
    want = lexical_scores(clean / "store", cfg, embedder, dataset)
    assert any(want) and len(got) == len(want)
    for mine, theirs in zip(got, want, strict=True):
        assert mine == pytest.approx(theirs, abs=1e-6)
    retrieval = [json.loads((run / "retrieval.json").read_text()) for run in (out, clean)]
    assert retrieval[0] == retrieval[1]
