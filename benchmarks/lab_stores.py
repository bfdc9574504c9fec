"""The retrieval lab's cached stores: each development split ingested once, on the embedded
defaults (extractive backend, MiniLM, LanceDB + Tantivy), into `benchmarks/.lab/` (ignored by
git). Scoring a retrieval idea then costs seconds, not an ingest.

LoCoMo: one store, one user per conversation (how `hymem eval locomo` ingests it).
LongMemEval-S: one store, one user per question (its haystack sessions), as `hymem eval
longmemeval` ingests it; every `LME_STRIDE`-th question, `LME_QUESTIONS` of them, so every
question type is in (an ingest of all 100 takes over an hour on 2 cores).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hymem import Memory, MemoryConfig
from hymem.evaluation.locomo_data import LocomoConversation, load_locomo
from hymem.evaluation.longmemeval.data import LmeQuestion, load_longmemeval
from hymem.evaluation.longmemeval.ingest import ingest_question
from hymem.evaluation.runner import ingest_conversation

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "benchmarks" / ".lab"
SHARED = ROOT.parent / "shared" / "data"
LOCOMO = SHARED / "locomo" / "locomo10-dev.json"
LONGMEMEVAL = SHARED / "longmemeval" / "longmemeval_s_dev.json.gz"


def lab_config(**overrides: Any) -> MemoryConfig:
    return MemoryConfig.defaults(**overrides)


def locomo_conversations() -> list[LocomoConversation]:
    return load_locomo(LOCOMO)


def locomo_store(config: MemoryConfig | None = None) -> Memory:
    """The LoCoMo development split's store, ingested on first use."""
    folder = LAB / "locomo"
    done = folder / "ingested.json"
    if done.exists():
        return Memory(folder / "store", config=config or lab_config())
    folder.mkdir(parents=True, exist_ok=True)
    mem = Memory(folder / "store", config=config or lab_config())
    report = []
    t0 = time.perf_counter()
    for conv in locomo_conversations():
        if mem.stats(user_id=conv.sample_id)["turns"]:
            continue
        report.append(ingest_conversation(mem, conv, sleep=False, on_turn=lambda: None))
        print(f"ingested {conv.sample_id} ({time.perf_counter() - t0:.0f} s)", flush=True)
    done.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return mem


LME_QUESTIONS = 12  # every LME_STRIDE-th question of the development split: all types
LME_STRIDE = 8


def longmemeval_questions(limit: int = LME_QUESTIONS) -> list[LmeQuestion]:
    return list(load_longmemeval(LONGMEMEVAL).questions)[::LME_STRIDE][:limit]


def longmemeval_store(config: MemoryConfig | None = None) -> Memory:
    """`longmemeval_questions()` of LongMemEval-S's development split, one user per
    question, ingested on first use (a crash part-way resumes by question)."""
    folder = LAB / "longmemeval"
    done = folder / "ingested.json"
    if done.exists():
        return Memory(folder / "store", config=config or lab_config())
    folder.mkdir(parents=True, exist_ok=True)
    mem = Memory(folder / "store", config=config or lab_config())
    report = []
    t0 = time.perf_counter()
    for q in longmemeval_questions():
        if mem.stats(user_id=q.question_id)["turns"]:
            continue
        report.append(ingest_question(mem, q, on_turns=lambda n: None))
        print(f"ingested {q.question_id} ({time.perf_counter() - t0:.0f} s)", flush=True)
    done.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return mem


__all__ = [
    "LAB",
    "LOCOMO",
    "LONGMEMEVAL",
    "lab_config",
    "locomo_conversations",
    "locomo_store",
    "longmemeval_questions",
    "longmemeval_store",
]
