"""predictions.jsonl (and other per-item JSONL logs): one line per finished item, appended as
each finishes, so an interrupted run loses at most the items in flight; on restart the finished
keys are skipped. The log is generic over a `KeyedRecord` model, so LoCoMo's and LongMemEval's
records (and LongMemEval's retrieval rows) share one appender and one torn-line-tolerant reader."""

from __future__ import annotations

import json
import os
import threading
from abc import abstractmethod
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from hymem.core.logging import get_logger
from pydantic import BaseModel, Field, ValidationError

log = get_logger("hymem.evaluation.predictions")

Key = tuple[str | int, ...]


class KeyedRecord(BaseModel):
    """A JSONL row with an identity: a repeated key is a repeat of the same finished item."""

    @property
    @abstractmethod
    def key(self) -> Key:
        """What makes two rows the same finished item (each record kind says)."""


R = TypeVar("R", bound=KeyedRecord)


class AnswerRecord(KeyedRecord):
    """What every benchmark records about one system's scored answer. Metrics are computed when
    the answer is written, so reports and the dashboard never need the models again."""

    system: str
    question: str
    gold: str
    prediction: str
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


class PredictionRecord(AnswerRecord):
    """A scored LoCoMo answer."""

    conversation: str
    qa_index: int
    category: int
    evidence: list[str] = Field(default_factory=list)
    f1: float
    bleu1: float
    evidence_recall: float | None = None

    @property
    def key(self) -> Key:
        return (self.system, self.conversation, self.qa_index)


@overload
def read_predictions(path: Path) -> list[PredictionRecord]: ...
@overload
def read_predictions(path: Path, model: type[R]) -> list[R]: ...
def read_predictions(path: Path, model: type[KeyedRecord] = PredictionRecord) -> list[Any]:
    """Every valid record; a torn last line (the process died mid-write) is skipped, and a
    repeated key keeps its first record."""
    if not path.exists():
        return []
    out: dict[Key, KeyedRecord] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = model.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                log.warning(
                    "predictions.skip_line", path=str(path), line=lineno, error=str(exc)[:200]
                )
                continue
            out.setdefault(rec.key, rec)
    return list(out.values())


class PredictionLog(Generic[R]):
    """Thread-safe appender; `done` holds the keys already on disk."""

    @overload
    def __init__(self: PredictionLog[PredictionRecord], path: Path) -> None: ...
    @overload
    def __init__(self, path: Path, model: type[R]) -> None: ...
    def __init__(self, path: Path, model: type[KeyedRecord] = PredictionRecord) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.done: set[Key] = {r.key for r in read_predictions(path, model)}
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

    def append(self, record: R) -> bool:
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
