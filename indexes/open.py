"""The one factory of stores: a local folder, an object-store URI, or the in-memory twin.

Only this module and the two openers it calls (`folder/open.py`, `objects/open.py`) know which
kind of store they build; everything else holds a `Storage` (or the `Store` it returns) and
never asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hymem.indexes.folder.open import open_folder_store
from hymem.indexes.location import StoreLocation, parse_location
from hymem.indexes.objects.open import RemoteSettings, open_object_store
from hymem.indexes.ports import Storage
from hymem.indexes.shards.open import open_sharded, shard_count
from hymem.indexes.store.maintenance import VECTOR_INDEX_MIN_ROWS
from hymem.indexes.store.store import Store

# Default bound of the in-memory dense index (MemoryConfig.dense_cache_mb): 1M MiniLM vectors.
DEFAULT_DENSE_CACHE_BYTES = 2048 * 1024 * 1024


def open_store(
    path: str | Path | StoreLocation,
    *,
    embedder_name: str,
    dim: int,
    read_only: bool = False,
    vector_index_min_rows: int = VECTOR_INDEX_MIN_ROWS,
    dense_cache_bytes: int = DEFAULT_DENSE_CACHE_BYTES,
    storage_options: Mapping[str, str] | None = None,
    remote: RemoteSettings | None = None,
    cache_dir: str | Path | None = None,
) -> Store:
    """Create or open a store. Raises StoreLockedError, SchemaVersionError,
    EmbedderMismatchError, StoreUnavailableError.

    `path` is a folder, or an object-store URI (`storage_options` say how to reach it,
    `remote` how workers share it, `cache_dir` where this worker keeps its lexical replica).
    `dense_cache_bytes` bounds the in-memory exact dense index; 0 sends every dense query to
    LanceDB."""
    location = (
        path
        if isinstance(path, StoreLocation)
        else parse_location(path, storage_options=storage_options, cache_dir=cache_dir)
    )
    if location.remote:
        return open_object_store(
            location,
            embedder_name=embedder_name,
            dim=int(dim),
            read_only=read_only,
            vector_index_min_rows=vector_index_min_rows,
            dense_cache_bytes=dense_cache_bytes,
            remote=remote,
        )
    return open_folder_store(
        Path(location.uri),
        embedder_name=embedder_name,
        dim=int(dim),
        read_only=read_only,
        vector_index_min_rows=vector_index_min_rows,
        dense_cache_bytes=dense_cache_bytes,
    )


def open_memory_store(
    path: str | Path | StoreLocation,
    *,
    embedder_name: str,
    dim: int,
    read_only: bool = False,
    shards: int = 1,
    vector_index_min_rows: int = VECTOR_INDEX_MIN_ROWS,
    dense_cache_bytes: int = DEFAULT_DENSE_CACHE_BYTES,
    storage_options: Mapping[str, str] | None = None,
    remote: RemoteSettings | None = None,
    cache_dir: str | Path | None = None,
) -> Storage:
    """`open_store`, or on an object store made with several shards (`hymem.indexes.shards`)
    every shard behind one `ShardedStore`. `shards` applies only when this call creates the
    store: an existing store keeps the count it was made with. A local folder has one writer
    and one shard, so `shards` is ignored there."""
    location = (
        path
        if isinstance(path, StoreLocation)
        else parse_location(path, storage_options=storage_options, cache_dir=cache_dir)
    )
    count = shard_count(location, shards, read_only=read_only) if location.remote else 1

    def open_one(at: StoreLocation) -> Store:
        return open_store(
            at,
            embedder_name=embedder_name,
            dim=dim,
            read_only=read_only,
            vector_index_min_rows=vector_index_min_rows,
            dense_cache_bytes=dense_cache_bytes // count,
            remote=remote,
        )

    if count == 1:
        return open_one(location)
    refresh_s = (remote or RemoteSettings()).refresh_s
    return open_sharded(location, count, open_one, read_only=read_only, refresh_s=refresh_s)


__all__ = ["DEFAULT_DENSE_CACHE_BYTES", "RemoteSettings", "open_memory_store", "open_store"]
