"""Opening a sharded store: read (or, for a new store, claim) its manifest, open every shard.

Layout under the store's URI:

    <uri>/_hymem/shards.json   {"format": 1, "shards": N}: fixed when the store is created
    <uri>/shards/00/ ...       shard 0, a complete store (`hymem.indexes.location` layout)
    <uri>/shards/NN/ ...

The manifest is created with a conditional put, so workers opening a new store at once agree on
one shard count (the first claim wins, later ones take it). A store made before shards existed
(the unsharded layout, its identity at the root) opens as it always did: one shard, whatever
`shards` asks, since moving its users would need a copy (logged). Each worker keeps each
shard's Tantivy replica in its own cache folder below the store's.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from hymem.core.errors import StoreError
from hymem.core.logging import get_logger
from hymem.indexes.location import StoreLocation
from hymem.indexes.objects.obstore import RemoteObjects
from hymem.indexes.ports import Storage
from hymem.indexes.shards.placement import (
    MANIFEST_KEY,
    check_count,
    decode_manifest,
    encode_manifest,
    shard_uri,
)
from hymem.indexes.shards.router import ShardedStore
from hymem.indexes.store.faults import storage_faults

log = get_logger("hymem.indexes.shards")

UNSHARDED_IDENTITY_KEY = "_hymem/identity.json"  # an unsharded store's identity claim


def shard_count(location: StoreLocation, requested: int, *, read_only: bool) -> int:
    """How many shards the store at `location` has: its manifest's count; for a new store
    (nothing there) `requested`, claimed by this opener unless another claimed first; 1 for
    a store made unsharded. Costs one GET on an existing store."""
    check_count(requested)
    objects = RemoteObjects(location.uri, location.storage_options)
    with storage_faults(location.uri, "reading the shard manifest"):
        found = objects.get(MANIFEST_KEY)
        if found is not None:
            count = decode_manifest(found.data, location.uri)
            if requested not in (1, count):
                log.info("store.shards_fixed", path=location.uri, asked=requested, has=count)
            return count
        if requested == 1 or read_only:
            return 1
        if objects.get(UNSHARDED_IDENTITY_KEY) is not None:
            log.warning(
                "store.unsharded", path=location.uri, asked=requested, note="opened with 1 shard"
            )
            return 1
        objects.create(MANIFEST_KEY, encode_manifest(requested))
        winner = objects.get(MANIFEST_KEY)
    if winner is None:
        raise StoreError(f"the shard manifest of {location.uri} vanished while it was created")
    return decode_manifest(winner.data, location.uri)


def shard_location(root: StoreLocation, index: int) -> StoreLocation:
    """Shard `index` of the store at `root`: its own prefix and its own cache folder."""
    return replace(root, uri=shard_uri(root.uri, index), cache=root.cache / f"shard-{index:02d}")


def open_sharded(
    location: StoreLocation,
    count: int,
    open_one: Callable[[StoreLocation], Storage],
    *,
    read_only: bool,
    refresh_s: float,
) -> ShardedStore:
    """Open the `count` shards of the store at `location` in parallel (each open is several
    round trips); if any fails, the ones opened are closed and the first failure raised."""
    locations = [shard_location(location, i) for i in range(count)]
    opened: list[Storage | None] = [None] * count
    failure: BaseException | None = None

    def open_at(index: int) -> None:
        opened[index] = open_one(locations[index])

    with ThreadPoolExecutor(min(count, 8), thread_name_prefix="hymem-shard-open") as pool:
        futures = [pool.submit(open_at, i) for i in range(count)]
        for future in futures:
            exc = future.exception()
            if exc is not None and failure is None:
                failure = exc
    if failure is not None:
        for store in opened:
            if store is not None:
                store.close()
        raise failure
    shards = [store for store in opened if store is not None]
    log.info("store.open_sharded", path=location.uri, shards=count, read_only=read_only)
    return ShardedStore(location.uri, shards, read_only=read_only, refresh_s=refresh_s)


__all__ = ["open_sharded", "shard_count", "shard_location"]
