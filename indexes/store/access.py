"""Who may write which user, as one small Protocol the `Store` consults before every write.

A folder has one writer process (a file lock held for the store's lifetime: `folder.access`);
an object store has one writer per user at a time (a lease per user, taken, renewed and fenced:
`objects.access`). The `Store` never asks which kind it has: it asks its access.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol


class WriteAccess(Protocol):
    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        """Hold the right to write `user_id` for the block; yields True when another writer
        wrote the user since this one last did (what was cached of the user is stale)."""
        ...

    def fence(self, user_id: str) -> None:
        """Right before a write of `user_id`: still entitled to write it? Raises if not."""
        ...

    def close(self) -> None:
        """Give up every right held (idempotent)."""
        ...


__all__ = ["WriteAccess"]
