"""The sleep journal: every finished update decision, appended and fsync'd as it completes.

Its lines live in the store (`SleepLog.sleep_log()`: a fsync'd file in a folder, a table on an
object store, a list in the in-memory twin), one JSON object per line. A decision is keyed by
the target summary and a hash of exactly what the model saw (the target's text, its queue's ids
and texts, the backend label), so:

* an interrupted sleep resumes without asking again for decisions it already finished;
* a second sleep over unchanged data finds every decision here and asks nothing;
* `restore()` appends an override (an ignore under the same key) so the undone merge is not
  redone by the next sleep on the same inputs.

Each entry also records the watermark of the snapshot it was decided on (the newest summary
creation time then visible): a later version of the same summary is "settled" while its queue
holds nothing created after that watermark. A torn last line (a crash mid-append) is skipped.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Literal

from hymem.core.logging import get_logger
from hymem.indexes.memory.lines import MemoryLines
from hymem.indexes.ports import LineLog
from pydantic import BaseModel, ValidationError

log = get_logger("hymem.sleep.journal")

JOURNAL_VERSION = 1


class JournalEntry(BaseModel):
    v: int = JOURNAL_VERSION
    kind: Literal["decision", "override"] = "decision"
    user_id: str
    target_id: str
    key: str
    action: Literal["update", "delete", "ignore"]
    text: str | None = None
    evidence_id: str | None = None
    reason: str | None = None
    rejected: str | None = None
    queue_ids: list[str] = []
    watermark: datetime | None = None
    backend: str = ""
    at: datetime


def queue_key(
    user_id: str,
    target_id: str,
    target_text: str,
    queue: Sequence[tuple[str, str]],
    backend: str,
) -> str:
    """Hash of one decision's inputs: same key, same question to the same model."""
    h = hashlib.sha256()
    for part in (user_id, target_id, target_text, backend):
        h.update(part.encode())
        h.update(b"\x1e")
    for qid, text in queue:
        h.update(qid.encode())
        h.update(b"\x1f")
        h.update(text.encode())
        h.update(b"\x1e")
    return h.hexdigest()


class SleepJournal:
    """The decisions of every sleep, indexed by key and target over the store's `LineLog`.
    Thread-safe; the lines are read once, then kept in step with what this process appends."""

    def __init__(self, lines: LineLog | None = None) -> None:
        """`lines=None` keeps the journal in memory only (tests, dry tools)."""
        self._lines: LineLog = lines if lines is not None else MemoryLines()
        self._lock = threading.Lock()
        self._by_key: dict[str, JournalEntry] = {}
        self._by_target: dict[str, list[JournalEntry]] = {}
        self._loaded = False

    # --- reading ------------------------------------------------------------------------
    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._index_lines(self._lines.lines())

    def _index_lines(self, lines: Iterable[str]) -> None:
        bad = 0
        for line in lines:
            try:
                self._index(JournalEntry.model_validate_json(line))
            except (ValidationError, ValueError):
                bad += 1
        if bad:
            log.warning("sleep_journal.skipped_lines", lines=bad)

    def reload_user(self, user_id: str) -> None:
        """Re-read a user's entries: another worker may have appended some (it held the user's
        lease since this one did)."""
        with self._lock:
            if not self._loaded:
                return  # the first read loads everything anyway
            self._drop_user(user_id)
            self._index_lines(self._lines.lines(user_id))

    def _index(self, entry: JournalEntry) -> None:
        self._by_key[entry.key] = entry  # the last entry for a key wins (overrides)
        self._by_target.setdefault(entry.target_id, []).append(entry)

    def lookup(self, key: str) -> JournalEntry | None:
        with self._lock:
            self._load()
            return self._by_key.get(key)

    def for_target(self, target_id: str) -> list[JournalEntry]:
        with self._lock:
            self._load()
            return list(self._by_target.get(target_id, []))

    def watermark(self, target_ids: Iterable[str]) -> datetime | None:
        """The newest snapshot any of these versions was decided on (None: never decided)."""
        with self._lock:
            self._load()
            marks = [
                e.watermark
                for t in target_ids
                for e in self._by_target.get(t, [])
                if e.kind == "decision" and e.watermark is not None
            ]
        return max(marks) if marks else None

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return sum(len(v) for v in self._by_target.values())

    # --- writing ------------------------------------------------------------------------
    def append(self, entries: Sequence[JournalEntry]) -> None:
        """Durable once this returns: after it the decisions survive a SIGKILL."""
        if not entries:
            return
        with self._lock:
            self._load()
            self._lines.append([(e.user_id, e.model_dump_json()) for e in entries])
            for e in entries:
                self._index(e)

    def forget_user(self, user_id: str) -> int:
        """Drop every entry of `user_id` (erasure: the store deletes the lines themselves,
        inside its journaled erase); returns how many there were."""
        with self._lock:
            self._load()
            gone = sum(e.user_id == user_id for v in self._by_target.values() for e in v)
            self._drop_user(user_id)
            return gone

    def _drop_user(self, user_id: str) -> None:
        self._by_key = {k: e for k, e in self._by_key.items() if e.user_id != user_id}
        by_target: dict[str, list[JournalEntry]] = {}
        for target, entries in self._by_target.items():
            kept = [e for e in entries if e.user_id != user_id]
            if kept:
                by_target[target] = kept
        self._by_target = by_target

    def close(self) -> None:
        """Nothing to release: the store owns the lines."""


__all__ = ["JOURNAL_VERSION", "JournalEntry", "SleepJournal", "queue_key"]
