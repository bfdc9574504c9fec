"""predictions.jsonl: one line per finished (system, conversation, question). Appended as each
question finishes, so an interrupted run loses at most the questions in flight; on restart the
finished keys are skipped."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from hymem.logging import get_logger
from pydantic import BaseModel, Field, ValidationError

log = get_logger("hymem.evaluation.predictions")

Key = tuple[str, str, int]


class PredictionRecord(BaseModel):
    """A scored answer. Metrics are computed when the answer is written, so reports and the
    dashboard never need the models again."""

    system: str
    conversation: str
    qa_index: int
    category: int
    question: str
    gold: str
    evidence: list[str] = Field(default_factory=list)
    prediction: str
    f1: float
    bleu1: float
    evidence_recall: float | None = None
    judge_correct: bool | None = None
    judge_label: str | None = None
    retrieved_turn_ids: list[str] = Field(default_factory=list)
    context_tokens: int = 0
    path: str = "none"
    escalated: bool = False
    escalation_reason: str | None = None
    iterations: int = 0
    light_calls: int = 0
    deep_calls: int = 0
    reflect_calls: int = 0
    light_tokens: int = 0
    deep_tokens: int = 0
    reflect_tokens: int = 0
    calls: int = 0
    tokens: int = 0
    latency_ms: float = 0.0
    latency_stages: dict[str, float] = Field(default_factory=dict)
    backend: str = ""
    trace_id: str | None = None
    fallbacks: list[str] = Field(default_factory=list)
    finished_at: str = ""

    @property
    def key(self) -> Key:
        return (self.system, self.conversation, self.qa_index)


def read_predictions(path: Path) -> list[PredictionRecord]:
    """Every valid record; a torn last line (the process died mid-write) is skipped, and a
    repeated key keeps its first record."""
    if not path.exists():
        return []
    out: dict[Key, PredictionRecord] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = PredictionRecord.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                log.warning(
                    "predictions.skip_line", path=str(path), line=lineno, error=str(exc)[:200]
                )
                continue
            out.setdefault(rec.key, rec)
    return list(out.values())


class PredictionLog:
    """Thread-safe appender; `done` holds the keys already on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.done: set[Key] = {r.key for r in read_predictions(path)}
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        """Ends the file with a newline so a torn last line never glues onto the next record."""
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                last = fh.read(1)
            if last != b"\n":
                with self.path.open("ab") as fh:
                    fh.write(b"\n")

    def append(self, record: PredictionRecord) -> bool:
        """Writes and fsyncs one record; False (and nothing written) for a key already done."""
        line = record.model_dump_json() + "\n"
        with self._lock:
            if record.key in self.done:
                return False
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self.done.add(record.key)
            return True
