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

import json
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hymem.core.errors import HymemError
from hymem.core.logging import get_logger
from hymem.indexes.dense.cache import DenseCache
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.lance.sleep_log import SLEEP_LOG, TableLines, sleep_log_schema
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.replica import LexicalReplica
from hymem.indexes.location import StoreLocation
from hymem.indexes.objects.access import LeaseAccess
from hymem.indexes.objects.journals import ObjectJournals
from hymem.indexes.objects.leases import LeaseManager
from hymem.indexes.objects.objects import Objects
from hymem.indexes.objects.obstore import RemoteObjects
from hymem.indexes.objects.replica_sync import CacheSlot, ReplicaSync
from hymem.indexes.store.assemble import KindParts, Maintenance, StoreParts, assemble
from hymem.indexes.store.faults import storage_faults
from hymem.indexes.store.meta import Claim, MetaKeeper
from hymem.indexes.store.store import Store

log = get_logger("hymem.indexes.objects")

IDENTITY_KEY = "_hymem/identity.json"  # the first opener's claim on a new store's identity
OPEN_ATTEMPTS = 6  # a new store's tables being created by several openers at once


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


def _claim_identity(objects: Objects) -> Claim:
    """A new store's identity is claimed by one conditional create: the first opener wins,
    every other opener of the same new prefix takes the winner's (one store, one identity)."""

    mine = uuid.uuid4().hex  # tells our own claim (a retried one included) from another's

    def claim(meta: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        ours = json.dumps({"meta": meta, "claimant": mine}, sort_keys=True).encode()
        objects.create(IDENTITY_KEY, ours)
        found = objects.get(IDENTITY_KEY)
        try:
            stored = json.loads(found.data) if found is not None else None
        except ValueError:
            stored = None
        if not isinstance(stored, dict) or not isinstance(stored.get("meta"), dict):
            return meta, True  # deleted or garbled under us: ours stands
        return stored["meta"], stored.get("claimant") == mine

    return claim


def _open_meta(keeper: MetaKeeper, lance: LanceTables, read_only: bool) -> dict[str, Any]:
    """`keeper.open` (and the sleep journal's table), retried while other openers are creating
    the same new store's tables (LanceDB reports their concurrent creations as commit
    conflicts or half-made tables)."""
    for attempt in range(OPEN_ATTEMPTS):
        try:
            meta, _created = keeper.open(None, None)
            if not read_only:
                lance.ensure(SLEEP_LOG, sleep_log_schema())
            return meta
        except HymemError:
            raise
        except Exception as exc:
            if read_only or attempt == OPEN_ATTEMPTS - 1:
                raise
            log.info("store.open_retry", attempt=attempt + 1, error=str(exc)[:200])
            time.sleep(random.uniform(0.1, 0.3) * 2**attempt)
    raise AssertionError("unreachable")


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
                claim=None if read_only else _claim_identity(objects),
            )
            meta = _open_meta(keeper, lance, read_only)
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
