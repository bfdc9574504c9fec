"""Opening a memory on an object store (s3://, gs://, az://) shared by many workers.

What differs from a folder (`hymem.indexes.location` has the layout):

* durable state is all under the URI: LanceDB tables (with the `meta` table as the only copy
  of the store's identity), per-user commit journals and lease objects (`store/journals.py`,
  `leases.py`), the erasure marker, the sleep journal as a table (`lance/sleep_log.py`);
* instead of one writer process (a file lock), one writer per user at a time: every write is
  fenced by the user's lease (`access.LeaseAccess`), so a writer whose lease was taken over gets
  `LeaseLostError` instead of writing. Taking a lease that another writer held since this one
  did reloads the user: its leftover journal (a writer that died mid-commit) is settled exactly
  as a folder's is on open, and its caches are dropped;
* Tantivy lives in this worker's cache slot as a replica caught up from LanceDB
  (`replica_sync.py`), within `refresh_s` of other workers' commits and at once after this
  worker's own;
* background compaction is off: with many writers, `hymem optimize` (`Store.optimize`) is run
  explicitly, by one worker or a scheduled job. LanceDB commits it safely beside writers.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import timedelta

from hymem.indexes.dense.cache import DenseCache
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.lance.sleep_log import TableLines
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.replica import LexicalReplica
from hymem.indexes.location import StoreLocation
from hymem.indexes.objects.access import LeaseAccess
from hymem.indexes.objects.journals import ObjectJournals
from hymem.indexes.objects.leases import LeaseManager
from hymem.indexes.objects.obstore import RemoteObjects
from hymem.indexes.objects.replica_sync import CacheSlot, ReplicaSync
from hymem.indexes.store.assemble import KindParts, Maintenance, StoreParts, assemble
from hymem.indexes.store.faults import storage_faults
from hymem.indexes.store.meta import MetaKeeper
from hymem.indexes.store.store import Store
from hymem.logging import get_logger

log = get_logger("hymem.indexes.objects")


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


class _Reloader:
    """What taking over a user from another writer does: see its commits, settle what it left
    half-done (it may have died mid-commit), forget what this worker cached of the user. Bound
    to the parts once they exist (the lease access is built before them)."""

    parts: StoreParts | None = None

    def __call__(self, user_id: str) -> None:
        assert self.parts is not None, "a lease changed hands before the store was assembled"
        kind = self.parts.kind
        kind.lance.refresh()
        with kind.write_lock:
            self.parts.recovery.settle_leftover(user_id)
        kind.dense_cache.invalidate(user_id)
        kind.feed.catch_up()


def _no_background_ann(dense: DenseRows) -> Callable[[str], bool]:
    return lambda table: False  # no background builds: `optimize` builds indexes when asked


def open_object_store(
    location: StoreLocation,
    *,
    embedder_name: str,
    dim: int,
    read_only: bool,
    vector_index_min_rows: int,
    dense_cache_bytes: int,
    remote: RemoteSettings | None = None,
) -> Store:
    """Create or open the memory under an object-store URI. Raises StoreUnavailableError when
    the object store does not answer, and the folder store's errors otherwise."""
    settings = remote or RemoteSettings()
    objects = RemoteObjects(location.uri, location.storage_options)
    reload = _Reloader()
    leases = None
    if not read_only:
        leases = LeaseManager(
            objects,
            holder=holder_name(),
            ttl_s=settings.lease_ttl_s,
            wait_s=settings.lease_wait_s,
            linger_s=settings.lease_linger_s,
        )
    with ExitStack() as undo:
        slot = CacheSlot(location.cache)
        access = LeaseAccess(leases, reload, label=location.uri, slot=slot)
        undo.callback(access.close)
        with storage_faults(location.uri, "opening the memory"):
            lance = LanceTables(
                location.lance_uri,
                read_only=read_only,
                storage_options=location.storage_options,
                refresh=timedelta(seconds=settings.refresh_s),
            )
            keeper = MetaKeeper(
                location.uri,
                lance,
                read_only=read_only,
                embedder_name=embedder_name,
                dim=dim,
                meta_file=None,
            )
            meta, _created = keeper.open(None, None)
            keeper.check(meta)
            lex = LexicalIndex(slot.folder / "tantivy", writable=True, expected=False)
            undo.callback(lex.close)
            cache = DenseCache(dense_cache_bytes, dim)
            replica = LexicalReplica(lance, lex, slot.folder / "replica.json")
            feed = ReplicaSync(
                replica, lex, objects, slot.folder, cache, refresh_s=settings.refresh_s
            )
            kind = KindParts(
                path=location.uri,
                read_only=read_only,
                dim=dim,
                meta=meta,
                lance=lance,
                lex=lex,
                feed=feed,
                journals=ObjectJournals(objects),
                access=access,
                sleep_log=TableLines(lance, read_only=read_only),
                dense_cache=cache,
                write_lock=threading.RLock(),
                maintenance_folder=slot.folder,
            )
            upkeep = Maintenance(
                vector_index_min_rows=vector_index_min_rows,
                background=False,
                automatic=False,  # no compaction inside a user's write: `optimize` only
                needs_ann=_no_background_ann,
            )
            # Readers and writers alike drop a user's dense rows when a catch-up sees them change.
            parts = assemble(kind, upkeep, dense_read_only=False)
            reload.parts = parts
            undo.callback(parts.compactor.close)
            parts.recovery.repair_on_open(read_only=read_only)
            feed.follow()  # a cold cache builds the replica once, here
        undo.pop_all()
    log.info("store.open", path=location.uri, read_only=read_only, dim=dim)
    return Store(parts)


__all__ = ["RemoteSettings", "holder_name", "open_object_store"]
