"""The store's index maintainer thread: runs index work off the user's calls.

One daemon thread per writable store, named `hymem-index-<folder>`, started by the first
`signal()`. Signals coalesce: however many arrive while the work runs, it runs once more
afterwards, so a writer never queues work and never waits for it. An exception in the work is
logged and kept in `last_error`, never raised into a user call; the next signal tries again.

`stop()` wakes the thread and joins it. Work already running finishes first: a LanceDB index
build cannot be interrupted, so closing a store during an IVF_PQ build waits for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from hymem.core.logging import get_logger

log = get_logger("hymem.indexes.store.maintenance")


class IndexWorker:
    """Runs `work` on its own thread whenever signalled; see the module docstring."""

    def __init__(self, name: str, work: Callable[[], None]) -> None:
        self.name = name
        self._work = work
        self._cv = threading.Condition()  # held only briefly, never around `work`
        self._pending = False
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.last_error: BaseException | None = None

    @property
    def stopping(self) -> bool:
        """True once `stop()` was called: long work checks it between steps."""
        return self._stopping

    def signal(self) -> None:
        """Ask for one more run of the work; returns at once (starts the thread if needed)."""
        with self._cv:
            if self._stopping:
                return
            self._pending = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._cv.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no run is pending or under way (for tests and benchmarks); False if
        `timeout` seconds passed first."""
        with self._cv:
            return self._cv.wait_for(lambda: not (self._pending or self._busy), timeout)

    def stop(self) -> None:
        """Refuse new signals, drop a pending run, wait for a running one, join the thread."""
        with self._cv:
            self._stopping = True
            self._pending = False
            thread, self._thread = self._thread, None
            self._cv.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._pending or self._stopping)
                if self._stopping:
                    return
                self._pending = False
                self._busy = True
            try:
                self._work()
                self.last_error = None
            except Exception as exc:  # logged, never lost; the next signal retries
                self.last_error = exc
                log.exception("index.maintenance_failed", worker=self.name)
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()


__all__ = ["IndexWorker"]
