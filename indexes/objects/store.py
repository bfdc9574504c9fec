"""`RemoteStore`: the `Store` on an object store (s3://, gs://, az://), shared by many workers.

What differs from a folder (`location.py` has the layout):

* durable state is all under the URI: LanceDB tables (with the `meta` table as the only copy
  of the store's identity), per-user commit journals and lease objects (`journals.py`,
  `leases.py`), the erasure marker;
* instead of one writer process (a file lock), one writer per user at a time: `writing(user)`
  holds the user's lease, and every write is fenced first (`LeaseManager.fence`), so a writer
  whose lease was taken over gets `LeaseLostError` instead of writing. Taking a lease that
  another writer held since this one did reloads the user: its leftover journal (a writer that
  died mid-commit) is settled exactly as a folder's is on open, and its caches are dropped;
* Tantivy lives in this worker's cache slot as a replica caught up from LanceDB (`remote.py`),
  within `refresh_s` of other workers' commits and at once after this worker's own;
* background compaction is off: with many writers, `hymem optimize` (`Store.optimize`) is run
  explicitly, by one worker or a scheduled job. LanceDB commits it safely beside writers.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from hymem.errors import StoreError
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.folder.meta import FolderMeta
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.trace_table import TraceTable
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.replica import LexicalReplica
from hymem.indexes.objects.leases import LeaseManager
from hymem.indexes.objects.obstore import RemoteObjects
from hymem.indexes.objects.replica_sync import CacheSlot, ReplicaSync
from hymem.indexes.store.journals import ObjectJournals
from hymem.indexes.store.maintenance import Compactor
from hymem.indexes.store.records import RecordReader
from hymem.indexes.store.store import Store
from hymem.logging import get_logger

log = get_logger("hymem.indexes.store.store")


@dataclass(frozen=True)
class RemoteSettings:
    """How workers share an object store (`MemoryConfig`'s `lease_*` and `refresh_s`)."""

    lease_ttl_s: float = 30.0
    lease_wait_s: float = 60.0
    lease_linger_s: float = 2.0
    refresh_s: float = 2.0


def holder_name() -> str:
    """Unique per open store: host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class RemoteStore(Store):
    """A `Store` whose tables, journals and leases are on an object store."""

    _settings: RemoteSettings
    _slot: CacheSlot | None = None
    _leases: LeaseManager | None = None

    def _configure(self, remote: RemoteSettings | None) -> None:
        self._settings = remote or RemoteSettings()

    def _prepare(self) -> None:
        """No folder and no file lock: nothing to do before the parts open."""

    def _open_parts(self) -> None:
        loc = self.location
        self._objects = RemoteObjects(loc.uri, loc.storage_options)
        refresh = timedelta(seconds=self._settings.refresh_s)
        self._lance = LanceTables(
            loc.lance_uri,
            read_only=self.read_only,
            storage_options=loc.storage_options,
            refresh=refresh,
        )
        keeper = FolderMeta(
            loc.uri,
            self._lance,
            read_only=self.read_only,
            embedder_name=self.embedder_name,
            dim=self.dim,
            keep_file=False,
        )
        meta, _created = keeper.open(None, None)
        keeper.check(meta)
        self._meta = meta
        self._slot = CacheSlot(loc.cache)
        folder = self._slot.folder
        self._lex = LexicalIndex(folder / "tantivy", writable=True, expected=False)
        self._turns = TurnLog(self._lance)
        # Readers and writers alike drop a user's dense rows when a catch-up sees them change.
        self._dense = DenseRows(self._lance, self.dense_cache, self.dim, read_only=False)
        self._records = RecordReader(self._lance, self._lex, self._dense, self.dim, read_only=False)
        self._traces = TraceTable(self._lance)
        replica = LexicalReplica(self._lance, self._lex, folder / "replica.json")
        self._sync = ReplicaSync(  # type: ignore[assignment]
            replica,
            self._lex,
            self._objects,
            folder,
            self.dense_cache,
            refresh_s=self._settings.refresh_s,
        )
        self._compactor = Compactor(
            self._lance,
            self._sync,  # type: ignore[arg-type]
            self.vector_index_min_rows,
            folder=folder,
            write_lock=self._write_lock,
            background=False,
            needs_ann=self._needs_ann,
            automatic=False,  # no compaction inside a user's write: `optimize` only
        )
        if not self.read_only:
            self._leases = LeaseManager(
                self._objects,
                holder=holder_name(),
                ttl_s=self._settings.lease_ttl_s,
                wait_s=self._settings.lease_wait_s,
                linger_s=self._settings.lease_linger_s,
            )
        self._wire(ObjectJournals(self._objects))
        self._sync.catch_up()  # a cold cache builds the replica once, here

    def _release_parts(self) -> None:
        if self._leases is not None:
            self._leases.close()
        super()._release_parts()

    def _unlock(self) -> None:
        if self._slot is not None:
            self._slot.release()

    def close(self) -> None:
        if self._closed:
            return
        try:
            if self._leases is not None:
                self._leases.close()  # released now, not left to expire
        finally:
            super().close()

    @property
    def lance(self) -> LanceTables:
        """The tables (the sleep journal keeps its lines beside them: `sleep_log`)."""
        return self._lance

    # --- many writers ----------------------------------------------------------------------
    @contextmanager
    def writing(self, user_id: str) -> Iterator[bool]:
        self._check_writable()
        assert self._leases is not None
        with self._leases.hold(user_id) as lease:
            if lease.stale:
                self._reload_user(user_id)
            yield lease.stale

    def _reload_user(self, user_id: str) -> None:
        """Another writer held this user since we did: see its commits, settle what it left
        half-done (it may have died mid-commit), forget what we cached."""
        self._lance.refresh()
        with self._write_lock:
            self._recovery.settle_leftover(user_id)
        self.dense_cache.invalidate(user_id)
        self._sync.catch_up()

    def _fence(self, user_id: str) -> None:
        """Right before a write: hold the user's lease (taken now for a caller that did not
        use `writing`, reloading the user if it changed hands) and extend it by a conditional
        write, which fails with LeaseLostError if another writer took it over meanwhile."""
        if self._leases is None:
            raise StoreError(f"{self.path} was opened read-only")
        if not self._leases.holding(user_id):
            lease = self._leases.acquire(user_id)
            if lease.stale:
                self._reload_user(user_id)
        self._leases.fence(user_id)

    def _fresh(self) -> None:
        self._sync.maybe_catch_up()

    def catch_up(self) -> dict[str, int]:
        self._check_open()
        done = self._sync.catch_up()
        return {
            "upserted": done.upserted,
            "deleted": done.deleted,
            "users": len(done.users),
            **{f"{t}_version": v for t, v in done.versions.items()},
        }

    def _needs_ann(self, table: str) -> bool:
        return False  # no background index builds: `optimize` builds them when asked


__all__ = ["RemoteSettings", "RemoteStore", "holder_name"]
