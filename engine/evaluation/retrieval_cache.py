"""retrieval_questions.jsonl: the LoCoMo retrieval-recall stage's results, one row per question,
so a rerun into the same folder reuses them as it reuses ingestion (`ingest/<id>.json`) and
answers (`predictions.jsonl`). Without it a rerun whose every answer is cached still searched
every question again (6 searches, 2 contexts and 3 flat rankings each): most of its time.

A row is valid under a fingerprint of everything its numbers depend on: the run's essential
configuration (the manifest's, less the operational settings), embedder, dataset, sleep flag
and hymem version, the ks scored, `MEASURE_VERSION`, and the conversation's state in the store
(its ingest record and row counts). A change to any of them misses, so that question is scored
again; rows under a stale fingerprint are dropped from the file by `prune`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from hymem.core.logging import get_logger
from hymem.evaluation.manifest import essential_config
from hymem.evaluation.predictions import Key, KeyedRecord, PredictionLog, read_predictions

log = get_logger("hymem.evaluation.retrieval_cache")

FILENAME = "retrieval_questions.jsonl"
# Bump when what a row holds or how a question is scored changes: older rows then miss.
MEASURE_VERSION = 1
# Store counts that change what retrieval sees (traces and pending turns do not).
STATE_COUNTS = ("turns", "segments", "summaries", "active_summaries")

# (level, mode, credit, k, recall, tokens of the top-k)
ScoreRow = tuple[str, str, str, int, float, int]


class RetrievalQuestion(KeyedRecord):
    """One question's retrieval-recall results: recall@k and tokens per (level, mode, credit)
    and its matched-budget row (`locomo_budget.question_budgets`)."""

    fingerprint: str = ""
    conversation: str
    qa_index: int
    category: int
    scores: list[ScoreRow]
    budget: dict[str, Any]

    @property
    def key(self) -> Key:
        return (self.fingerprint, self.conversation, self.qa_index)


def fingerprint(parts: Mapping[str, Any]) -> str:
    """A short stable hash of JSON-able parts (key order does not matter)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_parts(manifest: Mapping[str, Any], ks: Sequence[int]) -> dict[str, Any]:
    """What every row of a run depends on, read from its manifest."""
    return {
        "measure": MEASURE_VERSION,
        "ks": sorted(ks),
        "config": essential_config(manifest),
        "embedder": manifest.get("embedder"),
        "dataset_sha256": manifest.get("dataset_sha256"),
        "sleep": bool(manifest.get("sleep")),
        "hymem": (manifest.get("versions") or {}).get("hymem"),
    }


def store_state(ingest: Mapping[str, Any] | None, counts: Mapping[str, int]) -> dict[str, Any]:
    """A conversation's state in the store: its ingest record (rewritten by a re-ingestion)
    and the row counts retrieval reads (a sleep or an added turn changes them)."""
    return {"ingest": dict(ingest or {}), "counts": {k: counts.get(k, 0) for k in STATE_COUNTS}}


class RetrievalCache:
    """The rows of one run folder. `state(conversation)` gives that conversation's store state
    (`store_state`); it is asked once per conversation, on first use."""

    def __init__(
        self,
        out: Path,
        base: Mapping[str, Any],
        state: Callable[[str], Mapping[str, Any]],
    ) -> None:
        self.path = out / FILENAME
        self._base = dict(base)
        self._state = state
        self._fingerprints: dict[str, str] = {}
        self._log: PredictionLog[RetrievalQuestion] = PredictionLog(self.path, RetrievalQuestion)
        self._rows = {r.key: r for r in read_predictions(self.path, RetrievalQuestion)}
        self.reused = 0
        self.computed = 0

    def fingerprint_of(self, conversation: str) -> str:
        fp = self._fingerprints.get(conversation)
        if fp is None:
            parts = {**self._base, "conversation": conversation, **self._state(conversation)}
            fp = self._fingerprints[conversation] = fingerprint(parts)
        return fp

    def get(self, conversation: str, qa_index: int) -> RetrievalQuestion | None:
        row = self._rows.get((self.fingerprint_of(conversation), conversation, qa_index))
        if row is not None:
            self.reused += 1
        return row

    def put(self, row: RetrievalQuestion) -> RetrievalQuestion:
        """Stores a freshly scored row under its conversation's current fingerprint."""
        row = row.model_copy(update={"fingerprint": self.fingerprint_of(row.conversation)})
        self._log.append(row)
        self._rows[row.key] = row
        self.computed += 1
        return row

    def prune(self, conversations: Collection[str]) -> int:
        """Drops the rows of `conversations` under a stale fingerprint (rows of others are
        kept for a later run that selects them); returns how many were dropped."""
        keep = [
            r
            for r in self._rows.values()
            if r.conversation not in conversations
            or r.fingerprint == self.fingerprint_of(r.conversation)
        ]
        dropped = len(self._rows) - len(keep)
        if dropped:
            tmp = self.path.with_suffix(".jsonl.tmp")
            tmp.write_text("".join(r.model_dump_json() + "\n" for r in keep), encoding="utf-8")
            os.replace(tmp, self.path)
            self._rows = {r.key: r for r in keep}
            self._log = PredictionLog(self.path, RetrievalQuestion)
            log.info("retrieval_cache.pruned", path=str(self.path), dropped=dropped)
        return dropped


__all__ = [
    "FILENAME",
    "MEASURE_VERSION",
    "RetrievalCache",
    "RetrievalQuestion",
    "ScoreRow",
    "fingerprint",
    "run_parts",
    "store_state",
]
