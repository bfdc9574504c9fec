"""`Store`: the persistent `Storage`, LanceDB as the source of truth plus a derived Tantivy index.

One class for every kind of persistent store. It is assembled from parts by an opener
(`folder/open.py` for a local folder, `objects/open.py` for an s3/gs/az URI, both reached
through `hymem.indexes.open.open_store`); only those openers know which kind they built. Here
every call is guarded (open? writable? entitled to write this user?), writes are serialised by
one lock and delegated to the collaborator that knows the concern:

    TurnLog       turns, the write-ahead log              (lance/turn_log.py)
    RecordReader  segment/summary reads, dense + lexical  (store/records.py, dense/)
    CommitWriter  the journaled multi-table writes        (store/commits.py)
    Eraser        a user's rows deleted and purged        (store/erasure.py)
    Recovery      journal settling and lexical repair     (store/recovery.py, store/repair.py)
    LexicalFeed   Tantivy kept in step with LanceDB       (lexical/feed.py)
    Compactor     compaction and ANN indexes              (store/maintenance.py)
    WriteAccess   who may write which user                (store/access.py)

The members that are one part's method behind a guard are not written out: `store/guards.py` says
which part serves each and under which guard, and `Store.__getattr__` builds it from there; only
the members that do more (the journaled writes, appends, erasure, maintenance) are written here.
Every public method's promise is written once, on its port (`hymem.indexes.ports`). Storage faults
(a full disk, damaged data, an object store that stops answering) become typed hymem errors
(`store/faults.py`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from hymem.core.errors import ReadOnlyStoreError, StoreClosedError
from hymem.core.logging import get_logger
from hymem.core.types import (
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    TurnRecord,
)
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.ports import LineLog
from hymem.indexes.store.assemble import StoreParts
from hymem.indexes.store.faults import guarded, storage_faults
from hymem.indexes.store.guards import GUARDS, Guard, Kind
from hymem.indexes.store.repair import RowRepair, RowSettler
from hymem.indexes.store.turn_appends import TurnAppends

log = get_logger("hymem.indexes.store")


class Store:
    """Opened once per Memory. Thread-safe for concurrent readers; writes serialised."""

    def __init__(self, parts: StoreParts) -> None:
        """Use `hymem.indexes.open.open_store`: it builds the parts and repairs on open."""
        kind = parts.kind
        self.path: Path | str = kind.path
        self.read_only = kind.read_only
        self.dim = kind.dim
        self.dense_cache = kind.dense_cache
        self._meta = kind.meta
        self._lance = kind.lance
        self._lex = kind.lex
        self._sync = kind.feed
        self._access = kind.access
        self._sleep_log = kind.sleep_log
        self._write_lock = kind.write_lock
        self._turns = parts.turns
        self._dense = parts.dense
        self._records = parts.records
        self._traces = parts.traces
        self._compactor = parts.compactor
        self._commits = parts.commits
        self._eraser = parts.eraser
        self._recovery = parts.recovery
        self._appends = TurnAppends(
            self.path, self._lance, self._turns, self._write_lock, self._compactor
        )
        self._closed = False

    # --- lifecycle -----------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return dict(self._meta)

    @property
    def lexical_unavailable(self) -> bool:
        return not self._lex.available

    @property
    def tables(self) -> LanceTables:
        """The LanceDB tables, for read-only use by tools (doctor, repair) and tests; a write
        through them bypasses the journal and the lexical index."""
        return self._lance

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._compactor.close()  # first: joins the index thread (waits out a build)
            self.dense_cache.clear()
            self._lex.close()
            self._sleep_log.close()
        finally:
            self._access.close()  # the writer lock, or the leases and the cache slot
        log.info("store.close", path=str(self.path))

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the store at {self.path} is closed")

    def _check_writable(self, user_id: str | None = None) -> None:
        """Open, writable, and (for `user_id`) still entitled to write that user."""
        self._check_open()
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} was opened read-only")
        if user_id is not None:
            self._access.fence(user_id)

    # --- the plain port members: one part's method behind a guard (`guards.GUARDS`) -------
    def __getattr__(self, name: str) -> Callable[..., Any]:
        """A port member not written out here: built once from its `GUARDS` entry (the part
        that serves it, the guard, the action a fault reports), then found directly."""
        guard = GUARDS.get(name)
        if guard is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        call = self._guarded(name, guard)
        self.__dict__[name] = call
        return call

    def _guarded(self, name: str, guard: Guard) -> Callable[..., Any]:
        part, method, action = guard.part, guard.method or name, guard.action
        kind = guard.kind
        # an action naming an argument ("listing {level}s") reads it from the bound call
        named = None
        if action is not None and "{" in action:
            named = inspect.signature(getattr(getattr(self, part), method))

        def call(*args: Any, **kwargs: Any) -> Any:
            if kind is Kind.WRITE:
                self._check_writable()
            else:
                self._check_open()
            if kind is Kind.SEARCH:
                self._sync.maybe_catch_up()  # within the staleness bound of other writers
            forward = getattr(getattr(self, part), method)  # looked up per call: patchable
            if action is None:
                return forward(*args, **kwargs)
            what = action
            if named is not None:
                what = action.format(**named.bind(*args, **kwargs).arguments)
            if kind is Kind.SCAN:
                return guarded(forward(*args, **kwargs), self.path, what)
            lock = self._write_lock if kind is Kind.WRITE else nullcontext()
            with lock, storage_faults(self.path, what):
                return forward(*args, **kwargs)

        call.__name__ = name
        return call

    # --- many writers --------------------------------------------------------------------
    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        self._check_open()
        return self._writing(user_id)

    @contextmanager
    def _writing(self, user_id: str) -> Iterator[bool]:
        """The user's right to write; first, a failed commit of the user that could not be
        rolled back then (an outage) is rolled back now, before the writer reads its pending
        turns: they are re-segmented from a store where no part of that commit is live."""
        with self._access.writing(user_id) as stale:
            if not self.read_only and self._recovery.due(user_id):
                with self._write_lock, storage_faults(self.path, "settling a failed commit"):
                    try:
                        self._recovery.settle_leftover(user_id)
                    finally:
                        self.dense_cache.invalidate(user_id)
            yield stale

    def replica_lag_s(self) -> float | None:
        return self._sync.lag_s()

    # --- turns ---------------------------------------------------------------------------
    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        self._check_writable()
        if not turns:
            return []
        for user in sorted({t.user_id for t in turns}):
            self._access.fence(user)
        return self._appends.append(turns, fresh_ids)  # grouped with concurrent callers

    # --- journaled writes ----------------------------------------------------------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
        *,
        changes: Sequence[StatusChange] = (),
    ) -> None:
        self._check_writable(user_id)
        with self._write_lock, storage_faults(self.path, "committing segments"):
            try:
                self._recovery.settle_leftover(user_id)
                changed = self._commits.commit_segments(
                    user_id, segments, summaries, stored_turn_ids, changes
                )
            except BaseException:
                self._recovery.after_failure(user_id, roll_back=True)  # undone: never served
                self.dense_cache.invalidate(user_id)  # whatever landed is read afresh
                raise
            self._dense.committed(user_id, segments, summaries)
            if changed:
                self._dense.changed(user_id, [], changed)

    def apply_summary_changes(
        self,
        user_id: str,
        new: Sequence[SummaryRecord],
        changes: Sequence[StatusChange],
        *,
        expect: Sequence[SummaryRecord] | None = None,
    ) -> None:
        self._check_writable(user_id)
        with self._write_lock, storage_faults(self.path, "applying summary changes"):
            try:
                self._recovery.settle_leftover(user_id)
                changed = self._commits.apply_summary_changes(user_id, new, changes, expect)
            except BaseException:
                self._recovery.after_failure(user_id)
                # statuses may have moved: the user's summaries are read afresh
                self.dense_cache.invalidate(user_id, [S.SUMMARIES])
                raise
            # The new versions and the changed rows go into a loaded entry as a delta (a
            # write-time merge on every flush must not make the next search reload the user).
            self._dense.changed(user_id, new, changed)

    def withdraw(
        self, user_id: str, turn_ids: Sequence[str], segment_ids: Sequence[str]
    ) -> dict[str, int]:
        self._check_writable(user_id)
        with self._write_lock, storage_faults(self.path, "withdrawing records"):
            try:
                self._recovery.settle_leftover(user_id)
                return self._commits.withdraw(user_id, turn_ids, segment_ids)
            except BaseException:
                self._recovery.after_failure(user_id)
                raise
            finally:
                self.dense_cache.invalidate(user_id)

    def erase_user(self, user_id: str) -> dict[str, int]:
        self._check_writable()
        # The maintenance thread compacts under this lock too; waiting it out first keeps a
        # long IVF build from racing the purge's version pruning.
        self._compactor.wait_idle()
        self._access.fence(user_id)
        with self._write_lock, storage_faults(self.path, "erasing a user"):
            try:
                self._recovery.settle_leftover(user_id)
                return self._eraser.erase(user_id)
            finally:
                self.dense_cache.invalidate(user_id)

    def sleep_log(self) -> LineLog:
        self._check_open()
        return self._sleep_log

    # --- maintenance ---------------------------------------------------------------------
    def settle_rows(self, *, summaries_lost: bool = False) -> RowRepair:
        """Make turns, segments and summaries agree by their own state (`repair.RowSettler`):
        what `hymem repair` runs after restoring damaged tables."""
        self._check_writable()
        with self._write_lock:
            settler = RowSettler(self._lance, self._commits, self._turns)
            return settler.settle(summaries_lost=summaries_lost)

    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        self._check_writable()
        with self._write_lock, storage_faults(self.path, "rebuilding the lexical index"):
            counts = self._sync.rebuild(progress, fresh=True)  # never opens a damaged folder
        log.info("store.reindex", path=str(self.path), **counts)
        return counts

    def optimize(self) -> None:
        self._check_writable()
        with storage_faults(self.path, "optimizing"):
            self._compactor.optimize()  # takes the write lock itself, after the maintenance lock
        log.info("store.optimize", path=str(self.path))


__all__ = ["Store"]
