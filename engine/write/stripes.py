"""Per-user ordering inside one process, without a lock per user kept forever.

The ingestor releases its process-wide lock around a turn append (so concurrent adds of other
users share the commit, `hymem.indexes.store.group_commit`); one user's adds must still run one
at a time and in order. A user always maps to the same stripe of a fixed set, so that holds, and
two users share a stripe only by chance (less overlap, never wrong). Order: a stripe before the
ingestor's lock, everywhere, and no thread holds two stripes, so `every` (taking them all in
order, for close) cannot deadlock.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

STRIPES = 64


class UserStripes:
    """A fixed set of re-entrant locks, one chosen per user by a stable hash."""

    def __init__(self, count: int = STRIPES) -> None:
        self._locks = [threading.RLock() for _ in range(count)]

    def __call__(self, user_id: str) -> threading.RLock:
        return self._locks[zlib.crc32(user_id.encode()) % len(self._locks)]

    @contextmanager
    def every(self) -> Iterator[None]:
        """All of them, in order: after every write in flight has finished."""
        with ExitStack() as held:
            for lock in self._locks:
                held.enter_context(lock)
            yield


__all__ = ["STRIPES", "UserStripes"]
