"""What a store on an object store adds to the folder store: the worker's cache slot, and the
lexical replica in the role `LexicalSync` plays for a folder.

A folder store has one writer, which updates Tantivy inside each commit and records the table
versions it matched. On an object store other workers commit too, so this worker's Tantivy is a
replica (`replica.LexicalReplica`) caught up from the LanceDB fragments it has not seen:

* after each of this worker's own commits (read-your-writes),
* before a search, when the last catch-up is older than `refresh_s` (the staleness bound for
  what other workers wrote; `Store.catch_up()` / `Memory.refresh()` forces one),
* and on open (a cold cache builds the replica once).

Every catch-up also drops the dense cache of each user whose rows changed, so dense search obeys
the same bound. An erasure anywhere bumps `_hymem/erasures.json`; a replica that sees it change
rebuilds afresh, so no worker's index keeps an erased user's bytes in its segments.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import filelock
from hymem.core.errors import CommitConflictError, StoreError
from hymem.core.logging import get_logger
from hymem.core.types import Level
from hymem.indexes.dense.cache import DenseCache
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.replica import CatchUp, LexicalReplica
from hymem.indexes.objects.objects import Objects

log = get_logger("hymem.indexes.objects.replica_sync")

ERASURES_KEY = "_hymem/erasures.json"
SEEN_FILE = "erasures.seen"
MAX_SLOTS = 64  # worker processes on one machine sharing a cache root


class CacheSlot:
    """A cache folder only this process uses: `<base>/slot-N`, the first whose lock is free.
    A restarted worker gets its old slot back (and its replica), two workers on one machine
    never share a Tantivy folder."""

    def __init__(self, base: Path) -> None:
        base.mkdir(parents=True, exist_ok=True)
        for n in range(MAX_SLOTS):
            folder = base / f"slot-{n}"
            lock = filelock.FileLock(str(base / f"slot-{n}.lock"), timeout=0, thread_local=False)
            try:
                lock.acquire()
            except filelock.Timeout:
                continue
            folder.mkdir(exist_ok=True)
            self.folder = folder
            self._lock = lock
            return
        raise StoreError(f"all {MAX_SLOTS} cache slots under {base} are in use")

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()


class ReplicaSync:
    """The `LexicalFeed` of an object store: this worker's Tantivy as a replica."""

    def __init__(
        self,
        replica: LexicalReplica,
        lex: LexicalIndex,
        objects: Objects,
        folder: Path,
        dense_cache: DenseCache,
        *,
        refresh_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._replica = replica
        self._lex = lex
        self._objects = objects
        self._seen_file = folder / SEEN_FILE
        self._dense = dense_cache
        self._refresh_s = refresh_s
        self._clock = clock
        self._last = float("-inf")
        self._lock = threading.Lock()

    # --- the LexicalFeed role ------------------------------------------------------------
    def record(self) -> None:
        """After this worker's own commit: catch up, so it reads its own writes at once.
        The commit is durable already, so a catch-up that concurrent erasures kept preempting
        is logged and left to the next search (forced due), never reported as the write
        failing: a caller told its write failed would send it again, and store it twice."""
        try:
            self.follow()
        except CommitConflictError as exc:
            self._last = float("-inf")
            log.warning("replica.catch_up_deferred", reason=str(exc))

    def rebuild(
        self, progress: Callable[[int], None] | None = None, *, fresh: bool = False
    ) -> dict[str, int]:
        self.follow(rebuild=fresh)
        counts = {lvl.value: self._lex.count(lvl) for lvl in Level}
        if progress is not None:
            progress(sum(counts.values()))
        return counts

    def after_purge(self) -> None:
        """An erasure purged rows: rebuild this replica afresh and tell the others to."""
        self._objects.put(ERASURES_KEY, uuid.uuid4().hex.encode())
        self.follow(rebuild=True)

    def unusable(self) -> str | None:
        return None if self._lex.problem is None else f"lexical index: {self._lex.problem}"

    def disagreement(self) -> str | None:
        return None  # a replica is caught up, never compared

    def disable(self, reason: str) -> None:
        self._lex.disable(reason)

    # --- catching up -------------------------------------------------------------------------
    def catch_up(self) -> dict[str, int]:
        done = self.follow()
        return {
            "upserted": done.upserted,
            "deleted": done.deleted,
            "users": len(done.users),
            **{f"{t}_version": v for t, v in done.versions.items()},
        }

    def follow(self, *, rebuild: bool = False) -> CatchUp:
        """Catch the replica up (or rebuild it), dropping the dense cache of changed users."""
        with self._lock:
            marker = self._objects.get(ERASURES_KEY)
            mark = marker.data.decode("utf-8", "replace") if marker is not None else ""
            if mark != self._seen():
                rebuild = True
            done = self._replica.rebuild() if rebuild else self._replica.catch_up()
            if done.rebuilt:
                self._dense.clear()
            for user in done.users:
                self._dense.invalidate(user)
            if mark != self._seen():
                self._seen_file.write_text(mark, encoding="utf-8")
            self._last = self._clock()
        if done.upserted or done.deleted:
            log.info(
                "replica.caught_up",
                upserted=done.upserted,
                deleted=done.deleted,
                users=len(done.users),
                rebuilt=done.rebuilt,
            )
        return done

    def lag_s(self) -> float | None:
        """Seconds since the last catch-up (what `refresh_s` bounds before a search)."""
        return math.inf if self._last == -math.inf else max(0.0, self._clock() - self._last)

    def maybe_catch_up(self) -> None:
        """Before a search: catch up if the last catch-up is older than the staleness bound.
        A search that finds another thread catching up does not wait for it."""
        if self._clock() - self._last < self._refresh_s:
            return
        if not self._lock.acquire(blocking=False):
            return
        self._lock.release()
        self.follow()

    def _seen(self) -> str:
        try:
            return self._seen_file.read_text(encoding="utf-8")
        except OSError:
            return ""


__all__ = ["ERASURES_KEY", "CacheSlot", "ReplicaSync"]
