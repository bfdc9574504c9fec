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
from collections.abc import Callable
from functools import partial
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


def _cached_store(
    name: str,
    config: MemoryConfig | None,
    users: list[tuple[str, Callable[[Memory], dict[str, Any]]]],
) -> Memory:
    """The lab store `name`, each (user, ingest) fed on first use; a crash part-way resumes
    by user (a user already holding turns is not fed again)."""
    folder = LAB / name
    done = folder / "ingested.json"
    folder.mkdir(parents=True, exist_ok=True)
    mem = Memory(folder / "store", config=config or lab_config())
    if done.exists():
        return mem
    report = []
    t0 = time.perf_counter()
    for user, ingest in users:
        if mem.stats(user_id=user)["turns"]:
            continue
        report.append(ingest(mem))
        print(f"ingested {user} ({time.perf_counter() - t0:.0f} s)", flush=True)
    done.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return mem


def locomo_store(config: MemoryConfig | None = None) -> Memory:
    """The LoCoMo development split's store, ingested on first use."""
    return _cached_store(
        "locomo",
        config,
        [
            (c.sample_id, partial(ingest_conversation, conv=c, sleep=False, on_turn=_nothing))
            for c in locomo_conversations()
        ],
    )


def _nothing(*_: object) -> None:
    return None


LME_QUESTIONS = 12  # every LME_STRIDE-th question of the development split: all types
LME_STRIDE = 8


def longmemeval_questions(limit: int = LME_QUESTIONS) -> list[LmeQuestion]:
    return list(load_longmemeval(LONGMEMEVAL).questions)[::LME_STRIDE][:limit]


def longmemeval_store(config: MemoryConfig | None = None) -> Memory:
    """`longmemeval_questions()` of LongMemEval-S's development split, one user per
    question, ingested on first use."""
    return _cached_store(
        "longmemeval",
        config,
        [
            (q.question_id, partial(ingest_question, question=q, on_turns=_nothing))
            for q in longmemeval_questions()
        ],
    )


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
