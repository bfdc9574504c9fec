"""A folder's write access: one writer process, holding the folder's file lock throughout."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from hymem.indexes.folder.lock import WriterLock


class FolderAccess:
    """The `WriteAccess` of a folder: the single writer always has every user (a reader,
    `lock=None`, holds nothing and writes nothing: the `Store` refuses its writes first)."""

    def __init__(self, lock: WriterLock | None) -> None:
        self._lock = lock

    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        return nullcontext(False)  # nobody else writes a folder: nothing cached goes stale

    def fence(self, user_id: str) -> None:
        """The file lock is held for the store's lifetime: nothing to check per write."""

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


__all__ = ["FolderAccess"]
