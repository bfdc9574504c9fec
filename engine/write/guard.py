"""`WriteGuard`: one object that says who may write a user now, handed to every component that
writes (the ingestor, the consolidator, the editor) and to the `Memory` that wires them.

It joins three things that used to be spread over the facade and callbacks into it:

* the right to write a user for a block (`Commits.writing`: an object store's per-user lease;
  a folder's single writer always holds it);
* what is dropped when that right comes back stale (another worker wrote the user since this
  process did): each component registers what it cached of a user (`on_stale`), and the guard
  drops all of it before the block runs;
* the versions lock: one sleep, restore, correction, erasure or import at a time, always taken
  before a user's lease (sleep holds it while it takes its users' leases, so every other
  holder takes them in the same order, and no two can wait on each other).

A read-only store holds nothing: `writing` yields False without asking the store, and the write
inside the block raises the store's own typed error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hymem.indexes.ports import Commits

StaleHandler = Callable[[str], None]


class WriteGuard:
    """The writes of one store's users: leases, stale caches and the versions lock."""

    def __init__(self, store: Commits) -> None:
        self._store = store
        self._on_stale: list[StaleHandler] = []
        # Re-entrant: a restore or correction runs its store writes under the same lock the
        # management call already holds.
        self.versions_lock = threading.RLock()

    def on_stale(self, handler: StaleHandler) -> None:
        """Call `handler(user_id)` whenever a user's right to write comes back stale: it
        drops what its component cached of that user (reloaded from the store on next use)."""
        self._on_stale.append(handler)

    @contextmanager
    def writing(self, user_id: str) -> Iterator[bool]:
        """Hold the right to write `user_id` for the block; True when another worker wrote
        the user since this process last did (every `on_stale` handler has run by then)."""
        if self._store.read_only:
            yield False
            return
        with self._store.writing(user_id) as stale:
            if stale:
                for handler in self._on_stale:
                    handler(user_id)
            yield stale

    @contextmanager
    def versions(self, user_id: str) -> Iterator[bool]:
        """The versions lock, then `user_id`'s right to write (this order everywhere): for
        a write that changes summary versions or rewrites the user underneath."""
        with self.versions_lock, self.writing(user_id) as stale:
            yield stale


__all__ = ["StaleHandler", "WriteGuard"]
