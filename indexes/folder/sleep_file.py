"""A folder's sleep journal lines: `<folder>/sleep/journal.jsonl`, appended and fsync'd.

One JSON entry per line (`hymem.sleep.journal` owns what a line means). Appends are durable
once `append` returns; a torn last line (a crash mid-append) is closed with a newline before
the next append so it never swallows an entry, and readers skip it. Deleting a user's lines
(erasure) rewrites the file to a temporary one, fsyncs it and renames it over the old, so a
crash leaves the old journal or the new.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from hymem.core.errors import ReadOnlyStoreError


def sleep_file(folder: Path) -> Path:
    """Where a memory folder keeps its sleep journal."""
    return folder / "sleep" / "journal.jsonl"


class FileLines:
    """The `LineLog` of a folder store."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self._read_only = read_only
        self._lock = threading.Lock()
        self._fd: int | None = None

    def lines(self, user_id: str | None = None) -> list[str]:
        try:
            with self.path.open("r", encoding="utf-8") as fh:
                found = [line.strip() for line in fh]
        except FileNotFoundError:
            return []
        found = [line for line in found if line]
        if user_id is None:
            return found
        return [line for line in found if _user_of(line) == user_id]

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyStoreError(f"{self.path} belongs to a memory opened read-only")

    def append(self, rows: Sequence[tuple[str, str]]) -> None:
        self._check_writable()
        if not rows:
            return
        data = "".join(line + "\n" for _, line in rows).encode("utf-8")
        with self._lock:
            fd = self._open()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)

    def delete_user(self, user_id: str) -> None:
        self._check_writable()
        with self._lock:
            if not self.path.exists():
                return
            keep = [line + "\n" for line in self.lines() if _user_of(line) != user_id]
            self._close()
            tmp = self.path.with_name(self.path.name + ".tmp")
            with tmp.open("w", encoding="utf-8") as out:
                out.writelines(keep)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
            fsync_dir(self.path.parent)

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd = None

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        created = not self.path.parent.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if created:
            fsync_dir(self.path.parent.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        if size:
            with self.path.open("rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    os.write(fd, b"\n")  # a torn last line must not swallow the next entry
        else:
            fsync_dir(self.path.parent)
        self._fd = fd
        return fd


def _user_of(line: str) -> str | None:
    """The `user_id` of one line; None for a torn or foreign one (never any user's)."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    user = entry.get("user_id") if isinstance(entry, dict) else None
    return user if isinstance(user, str) else None


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in `path` durable (a no-op where directories can't be)."""
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


__all__ = ["FileLines", "fsync_dir", "sleep_file"]
