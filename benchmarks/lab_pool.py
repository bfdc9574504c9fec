"""The lab's candidate pools: per LoCoMo question, the deep candidate lists hymem's searches
return (summaries and segments, hybrid, with each branch's rank and score), plus every summary's
vector and the question's, cached once in `benchmarks/.lab/locomo/pool.json`. A re-ranking idea
is then a pure function over a pool, scored in seconds before it is built into the engine."""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hymem.api.internals import embedder_of, store_of
from hymem.core.types import Level
from hymem.evaluation.metrics import CATEGORY_NAMES
from hymem.evaluation.runner import eligible_questions
from hymem.llm.tokens import count_tokens
from lab_stores import LAB, locomo_conversations, locomo_store

POOL = LAB / "locomo" / "pool.json.gz"
SUMMARY_DEPTH = 100
SEGMENT_DEPTH = 40


@dataclass
class Item:
    id: str
    text: str
    turns: list[str]
    segment: str
    dense_rank: int | None
    lexical_rank: int | None
    fused: float
    tokens: int
    when: str | None


@dataclass
class Question:
    user: str
    question: str
    cat: str
    evidence: list[str]
    summaries: list[Item]
    segments: list[Item]
    qvec: np.ndarray = field(repr=False)


@dataclass
class Pool:
    questions: list[Question]
    vectors: dict[str, dict[str, np.ndarray]]  # user -> summary id -> vector
    summary_turns: dict[str, dict[str, list[str]]]  # user -> summary id -> source turns
    summary_text: dict[str, dict[str, str]]
    summary_time: dict[str, dict[str, str | None]]


def _item(hit: Any) -> dict[str, Any]:
    return {
        "id": hit.id,
        "text": hit.text,
        "turns": list(hit.turn_ids),
        "segment": hit.segment_id,
        "dense_rank": hit.dense_rank,
        "lexical_rank": hit.lexical_rank,
        "fused": hit.fused_score,
        "tokens": count_tokens(hit.text),
        "when": hit.time_start.isoformat() if hit.time_start else None,
    }


def build() -> None:
    mem = locomo_store()
    out: dict[str, Any] = {"questions": [], "users": {}}
    try:
        for conv in locomo_conversations():
            user = conv.sample_id
            sums = store_of(mem).get_summaries(user, with_vectors=True)
            out["users"][user] = {
                s.id: {
                    "vector": [round(float(x), 5) for x in (s.vector or [])],
                    "turns": list(s.source_turn_ids),
                    "text": s.text,
                    "when": s.time_start.isoformat() if s.time_start else None,
                }
                for s in sums
            }
            for _, qa in eligible_questions(conv, adversarial=False, limit=None):
                if not qa.evidence:
                    continue
                s_hits = mem.search(qa.question, user_id=user, k=SUMMARY_DEPTH)
                g_hits = mem.search(qa.question, user_id=user, k=SEGMENT_DEPTH, level=Level.SEGMENT)
                qvec = embedder_of(mem).embed([qa.question])[0]
                out["questions"].append(
                    {
                        "user": user,
                        "question": qa.question,
                        "cat": CATEGORY_NAMES.get(qa.category, str(qa.category)),
                        "evidence": list(qa.evidence),
                        "summaries": [_item(h) for h in s_hits],
                        "segments": [_item(h) for h in g_hits],
                        "qvec": [round(float(x), 5) for x in qvec],
                    }
                )
            print(f"pooled {user}", flush=True)
    finally:
        mem.close()
    with gzip.open(POOL, "wt", encoding="utf-8") as fh:
        json.dump(out, fh)


def load() -> Pool:
    if not POOL.exists():
        build()
    with gzip.open(POOL, "rt", encoding="utf-8") as fh:
        raw = json.load(fh)
    vectors = {
        u: {i: np.asarray(s["vector"], dtype=np.float32) for i, s in rows.items()}
        for u, rows in raw["users"].items()
    }
    turns = {u: {i: s["turns"] for i, s in rows.items()} for u, rows in raw["users"].items()}
    texts = {u: {i: s["text"] for i, s in rows.items()} for u, rows in raw["users"].items()}
    times = {u: {i: s["when"] for i, s in rows.items()} for u, rows in raw["users"].items()}
    questions = [
        Question(
            user=q["user"],
            question=q["question"],
            cat=q["cat"],
            evidence=q["evidence"],
            summaries=[Item(**s) for s in q["summaries"]],
            segments=[Item(**s) for s in q["segments"]],
            qvec=np.asarray(q["qvec"], dtype=np.float32),
        )
        for q in raw["questions"]
    ]
    return Pool(questions, vectors, turns, texts, times)


if __name__ == "__main__":
    build()
