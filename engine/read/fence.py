"""The erase fence: a user's reads against an erasure of that user, in one Memory.

An ask writes what the user asked as it ends: its trace row, and the model replies it cached
on the way. One still running while `erase_user` deletes the user's rows would write them after
the deletion, and they would outlive the erase. So an erase first raises the user's fence: every
new ask, context or replay of that user is refused (`ErasureInProgressError`, before it reads
anything), and the erase waits until the ones already running have ended and handed their
trace to the trace writer. Only then does it read what to delete. Other users are never held.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from hymem.core.errors import ErasureInProgressError


class EraseFence:
    """Counts each user's reads in flight and erasures running; thread-safe."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._reading: Counter[str] = Counter()
        self._erasing: Counter[str] = Counter()

    @contextmanager
    def reading(self, user_id: str) -> Iterator[None]:
        """Hold the block as a read of `user_id`; refused at once while the user is erased."""
        with self._changed:
            if self._erasing[user_id]:
                raise ErasureInProgressError(
                    f"user {user_id!r} is being erased: this call was refused before it read "
                    "anything; once erase_user returns, the user has no memory"
                )
            self._reading[user_id] += 1
        try:
            yield
        finally:
            with self._changed:
                self._reading[user_id] -= 1
                if not self._reading[user_id]:
                    del self._reading[user_id]
                    self._changed.notify_all()

    @contextmanager
    def erasing(self, user_id: str) -> Iterator[None]:
        """Refuse new reads of `user_id` for the block, entered once its reads in flight have
        ended (they are bounded by the ask's own budget and model timeouts)."""
        with self._changed:
            self._erasing[user_id] += 1
        try:
            with self._changed:
                self._changed.wait_for(lambda: not self._reading[user_id])
            yield
        finally:
            with self._changed:
                self._erasing[user_id] -= 1
                if not self._erasing[user_id]:
                    del self._erasing[user_id]


__all__ = ["EraseFence"]
