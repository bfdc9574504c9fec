"""Auto-sleep: sleep a user once `MemoryConfig.auto_sleep_after` new summaries were written for
it since its last sleep. The `Memory` reports every write-path result here; the count lives in
this process only (a restart starts it again from zero, which at worst sleeps a little later)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from hymem.core.errors import HymemError
from hymem.core.logging import get_logger
from hymem.core.types import AddResult

log = get_logger("hymem.api.memory")


class AutoSleep:
    """Counts each user's new summaries and calls `sleep(user_id)` every `every` of them
    (never, for None). Thread-safe: one auto-sleep at a time."""

    def __init__(self, every: int | None, sleep: Callable[[str], object]) -> None:
        self._every = every
        self._sleep = sleep
        self._since: dict[str, int] = {}  # new summaries per user since its last sleep
        self._lock = threading.Lock()

    def after_store(self, user_id: str, result: AddResult) -> None:
        """Count what an add or flush wrote; sleep the user when the count is reached.
        Checked only when the call stored turns; a failed sleep is logged, never raised (the
        turns are stored) and is tried again after the next store."""
        every = self._every
        if every is None or not result.segments_written:
            return
        with self._lock:
            count = self._since.get(user_id, 0) + len(result.summaries_written)
            self._since[user_id] = count
            if count < every:
                return
            try:
                self._sleep(user_id)
            except HymemError as exc:
                log.warning("ingest.auto_sleep_failed", user_id=user_id, error=str(exc))
                return
            self._since[user_id] = 0
        log.info("ingest.auto_sleep", user_id=user_id, after=every)

    def forget(self, user_id: str) -> None:
        """The user was erased: its count starts again from zero."""
        with self._lock:
            self._since.pop(user_id, None)


__all__ = ["AutoSleep"]
