"""The sleep journal: every finished update decision, appended and fsync'd as it completes.

Lives at `<memory folder>/sleep/journal.jsonl`, one JSON object per line. A decision is keyed by
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
import os
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hymem.logging import get_logger
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from hymem.indexes.lance.sleep_log import TableLines

log = get_logger("hymem.sleep.journal")

JOURNAL_VERSION = 1


def journal_path(memory_folder: str | Path) -> Path:
    """Where a memory folder keeps its sleep journal."""
    return Path(memory_folder) / "sleep" / "journal.jsonl"


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
    """Append-only, fsync'd decision log. Thread-safe appends; reads load the file once."""

    def __init__(self, path: str | Path | None, *, table: TableLines | None = None) -> None:
        """`path=None` keeps the journal in memory only (tests, dry tools); `table` keeps it in
        a LanceDB table instead of a file (a store on an object store: `indexes.sleep_log`)."""
        self.path = Path(path) if path is not None else None
        self._table = table
        self._lock = threading.Lock()
        self._by_key: dict[str, JournalEntry] = {}
        self._by_target: dict[str, list[JournalEntry]] = {}
        self._loaded = False
        self._fh: int | None = None

    # --- reading ------------------------------------------------------------------------
    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self._table is not None:
            self._index_lines(self._table.lines())
            return
        if self.path is None or not self.path.exists():
            return
        bad = 0
        with self.path.open("r", encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    self._index(JournalEntry.model_validate_json(line))
                except (ValidationError, ValueError):
                    bad += 1
        if bad:
            log.warning("sleep_journal.skipped_lines", path=str(self.path), lines=bad)

    def _index_lines(self, lines: Iterable[str]) -> None:
        bad = 0
        for line in lines:
            try:
                self._index(JournalEntry.model_validate_json(line))
            except (ValidationError, ValueError):
                bad += 1
        if bad:
            log.warning("sleep_journal.skipped_lines", table=True, lines=bad)

    def reload_user(self, user_id: str) -> None:
        """Re-read a user's entries: another worker may have appended some (object stores;
        a file journal has one writer, so there is nothing new to read)."""
        if self._table is None:
            return
        with self._lock:
            if not self._loaded:
                return  # the first read loads everything anyway
            self._drop_user(user_id)
            self._index_lines(self._table.lines(user_id))

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
        """Write and fsync; after this returns the decisions survive a SIGKILL."""
        if not entries:
            return
        data = "".join(e.model_dump_json() + "\n" for e in entries).encode("utf-8")
        with self._lock:
            self._load()
            if self._table is not None:
                self._table.append([(e.user_id, e.model_dump_json()) for e in entries])
            elif self.path is not None:
                fd = self._open(self.path)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            for e in entries:
                self._index(e)

    def _open(self, path: Path) -> int:
        if self._fh is not None:
            return self._fh
        created = not path.parent.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        if created:
            _fsync_dir(path.parent.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        if size:
            with path.open("rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    os.write(fd, b"\n")  # a torn last line must not swallow the next entry
        else:
            _fsync_dir(path.parent)
        self._fh = fd
        return fd

    def forget_user(self, user_id: str) -> int:
        """Rewrite the journal without any entry of `user_id` (erasure); returns how many went.
        Written to a temporary file, fsync'd and renamed over the old one, so a crash leaves
        the old journal or the new, and the old file's name is gone. A torn line is dropped."""
        with self._lock:
            self._load()
            gone = sum(e.user_id == user_id for v in self._by_target.values() for e in v)
            if self._table is not None:
                self._table.delete_user(user_id)
                self._drop_user(user_id)
                return gone
            if self.path is None or not self.path.exists():
                self._drop_user(user_id)
                return gone
            keep: list[str] = []
            with self.path.open("r", encoding="utf-8") as fh:
                for line in fh:
                    try:
                        entry = JournalEntry.model_validate_json(line)
                    except (ValidationError, ValueError):
                        continue
                    if entry.user_id != user_id:
                        keep.append(line.rstrip("\n") + "\n")
            if self._fh is not None:
                os.close(self._fh)
                self._fh = None
            tmp = self.path.with_name(self.path.name + ".tmp")
            with tmp.open("w", encoding="utf-8") as out:
                out.writelines(keep)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
            _fsync_dir(self.path.parent)
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
        with self._lock:
            if self._fh is not None:
                os.close(self._fh)
            self._fh = None


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
