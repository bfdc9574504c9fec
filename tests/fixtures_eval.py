"""Fixtures for the evaluation tests: the tiny LoCoMo-format file (with a canary planted in
every annotation), hand-built traces and run folders with known numbers, and headless
Chromium."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hymem import RoleUsage, Trace
from hymem.read.trace_record import TraceRound

DATA = Path(__file__).parent / "data"
EVAL_MINI = DATA / "locomo_eval_mini.json"
# Planted in observation/session_summary/event_summary only: must never reach a store, a
# prompt or a prediction.
CANARY = "QUOKKA-CANARY-5521"
# Non-adversarial questions in EVAL_MINI (conv-mini-1 has 6 + 1 adversarial, conv-mini-2 has 2).
MINI_QUESTIONS = 8
MINI_QUESTIONS_ADVERSARIAL = 9
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


@pytest.fixture
def eval_mini() -> Path:
    return EVAL_MINI


def fixture_traces() -> list[Trace]:
    """Six traces as `Memory.traces()` returns them: 3 of 6 escalated (50%); round 1
    escalated in 3 of 6 asks, round 2 (reached by 2 asks) in 0 of 2."""
    t0 = datetime(2024, 3, 1, 9, 0)
    spec = [  # (path, escalated, rounds' escalation flags, tokens, latency ms)
        ("light", False, [False], 120, 20.0),
        ("light", False, [False, False], 240, 35.0),
        ("deep", True, [True], 900, 180.0),
        ("deep", True, [True, False], 1500, 260.0),
        ("light", False, [False], 100, 18.0),
        ("deep", True, [True], 1100, 210.0),
    ]
    return [
        Trace(
            trace_id=f"trace-{i}",
            user_id="u1",
            question=f"question {i}",
            depth="auto",
            path=path,
            escalated=escalated,
            escalation_reason="verdict" if escalated else None,
            iterations=len(rounds),
            answer="x",
            total_tokens=tokens,
            total_calls=2,
            latency_ms_total=latency,
            usage={"light_answer": RoleUsage(calls=1, prompt_tokens=tokens)},
            latency_ms={"light": latency, "total": latency},
            rounds=[TraceRound(index=j, escalated=flag) for j, flag in enumerate(rounds)],
            created_at=t0 + timedelta(minutes=i),
        )
        for i, (path, escalated, rounds, tokens, latency) in enumerate(spec)
    ]


def make_run_dir(root: Path, name: str = "run-a") -> Path:
    """A finished run folder: hymem (4 questions, 1 of 4 escalated, light F1 1.0 / deep F1
    0.5) and full-context (2 questions), with summary.json and report.md."""
    from hymem.evaluation.predictions import PredictionLog, PredictionRecord
    from hymem.evaluation.runner import write_outputs

    run = root / name
    run.mkdir(parents=True)
    log = PredictionLog(run / "predictions.jsonl")
    rows = [
        ("hymem", 0, 4, "light", False, 1.0, 30.0),
        ("hymem", 1, 4, "light", False, 1.0, 40.0),
        ("hymem", 2, 2, "light", False, 1.0, 50.0),
        ("hymem", 3, 1, "deep", True, 0.5, 400.0),
        ("full-context", 0, 4, "none", False, 1.0, 900.0),
        ("full-context", 1, 4, "none", False, 0.0, 1000.0),
    ]
    for system, idx, cat, path, esc, f1, lat in rows:
        log.append(
            PredictionRecord(
                system=system,
                conversation="conv-x",
                qa_index=idx,
                category=cat,
                question=f"q{idx}",
                gold="g",
                prediction="p",
                f1=f1,
                bleu1=f1,
                path=path,
                escalated=esc,
                iterations=1,
                latency_ms=lat,
                tokens=100 * (idx + 1),
                backend="extractive",
                finished_at=f"2024-03-01T10:0{idx}:00",
            )
        )
    write_outputs(run, dashboard=False)
    return run


@pytest.fixture
def chromium() -> Iterator[str]:
    for cand in CHROMIUM_CANDIDATES:
        if Path(cand).exists():
            yield cand
            return
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")
    yield found


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The real MiniLM embedder, loaded once per session (offline, from the bundled package)."""
    from hymem.embed.embedders import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()
