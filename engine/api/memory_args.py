"""What the `Memory` facade decides without a Memory: config shortcuts, where the store lives
and whether it may be created there, its object-store settings, whether close() runs while an
error unwinds, and how a flush folds into an add's result. (A call's arguments are checked by
`hymem.search.scope`, `hymem.read.params` and `hymem.write.request`.)"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hymem.core.config import MemoryConfig
from hymem.core.errors import StoreError, UserInputError
from hymem.core.logging import get_logger
from hymem.core.types import AddResult
from hymem.embed.embedders import Embedder
from hymem.indexes.folder.lock import META_FILE
from hymem.indexes.location import StoreLocation, is_remote_uri, parse_location
from hymem.indexes.objects.open import RemoteSettings
from hymem.indexes.open import open_memory_store
from hymem.indexes.ports import Storage
from hymem.write.ingestor import Ingestor

# Its own logger, so an application that reports pending turns itself (the CLI) can mute it.
pending_log = get_logger("hymem.api.memory.pending")


def with_overrides(
    config: MemoryConfig | None, *, llm: str | None, embedder: str | Embedder | None
) -> MemoryConfig:
    """The config with the `llm=` / `embedder=` shortcuts applied (and validated)."""
    overrides: dict[str, Any] = {}
    if llm is not None:
        overrides["llm"] = llm
    if isinstance(embedder, str):
        overrides["embedder"] = embedder
    if config is None:
        return MemoryConfig(**overrides)
    if not overrides:
        return config
    return config.updated(**overrides)


def exc_free() -> bool:
    """close() runs the optional sleep only on a clean exit, never while an error unwinds."""
    import sys

    return sys.exc_info()[0] is None


def store_location(
    path: str, storage_options: Mapping[str, str] | None, config: MemoryConfig
) -> StoreLocation:
    """Where `Memory(path)` lives. Options from the config (`HYMEM_STORAGE_OPTIONS`) apply
    to object-store URIs only; options passed with a local path are a mistake worth naming."""
    opts = dict(storage_options or {})
    if is_remote_uri(path):
        opts = {**(config.storage_options or {}), **opts}
    return parse_location(path, storage_options=opts, cache_dir=config.cache_dir)


def open_storage(
    location: StoreLocation,
    embedder: Embedder,
    config: MemoryConfig,
    *,
    create: bool | None,
    read_only: bool,
) -> Storage:
    """The store at `location` for this embedder and config, created there only as `create`
    allows (`check_creatable`); an unusable folder (no permission, not a folder) is a
    `StoreError` naming it."""
    check_creatable(location, create=create, read_only=read_only)
    try:
        return open_memory_store(
            location,
            embedder_name=embedder.name,
            dim=embedder.dim,
            read_only=read_only,
            shards=config.shards,
            vector_index_min_rows=config.vector_index_min_rows,
            dense_cache_bytes=config.dense_cache_mb * 1024 * 1024,
            remote=remote_settings(config),
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise StoreError(f"cannot open a memory at {location.uri}: {reason}") from exc


def remote_settings(config: MemoryConfig) -> RemoteSettings:
    return RemoteSettings(
        lease_ttl_s=config.lease_ttl_s,
        lease_wait_s=config.lease_wait_s,
        lease_linger_s=config.lease_linger_s,
        refresh_s=config.refresh_s,
    )


def check_creatable(location: StoreLocation, *, create: bool | None, read_only: bool) -> None:
    """Refuse to open a local folder that holds no memory unless one may be made there, so a
    mistyped path is an error instead of a new empty memory. `create=None` (the default)
    creates one only inside an existing folder, `True` makes missing parent folders too, and
    `False` (and any read-only open) needs a memory that exists.

    Object-store URIs are not checked: a prefix has no parent to check, and asking whether one
    exists would cost a round trip on every open; a writer creates the memory there, and a
    read-only open of a prefix that holds none is refused by the store itself."""
    if read_only and create:
        raise UserInputError("create=True needs a writer: a read_only=True open creates nothing")
    if location.remote:
        return
    folder = Path(location.uri)
    if (folder / META_FILE).is_file() or (folder / "lance").is_dir():
        return  # a memory (a lost meta.json is repaired from the `meta` table)
    if create is False or read_only:
        raise StoreError(
            f"no hymem memory at {folder}: check the path; a memory is created by opening it"
            f" for writing (`Memory({str(folder)!r})`, or `hymem add --store {folder}`)"
        )
    parent = folder.absolute().parent
    if create is None and not parent.is_dir():
        raise StoreError(
            f"cannot create a memory at {folder}: its parent folder {parent} does not exist"
            " (create it first, or pass create=True to make missing folders)"
        )


def with_flush(added: AddResult, flushed: AddResult) -> AddResult:
    """An add's result with the flush that followed it folded in (`flush_on_add`): the add's
    turns, both calls' writes and costs, and what is pending after the flush."""
    usage = added.usage.model_copy(deep=True)
    usage.merge(flushed.usage)
    return added.model_copy(
        update={
            "segments_written": [*added.segments_written, *flushed.segments_written],
            "summaries_written": [*added.summaries_written, *flushed.summaries_written],
            "usage": usage,
            "pending": flushed.pending,
            "error": flushed.error,
            "backend": flushed.backend or added.backend,
        }
    )


def warn_if_pending(ingestor: Ingestor, user_id: str, call: str) -> None:
    """A read that found nothing while the user has pending turns logs a warning: those turns
    are not searchable until flushed, which is easy to miss on a fresh memory."""
    waiting = len(ingestor.pending(user_id=user_id))
    if waiting:
        pending_log.warning(
            "memory.pending_not_searchable",
            user_id=user_id,
            call=call,
            pending=waiting,
            hint="pending turns become searchable when flushed: flush(user_id=...)",
        )


__all__ = [
    "check_creatable",
    "exc_free",
    "open_storage",
    "remote_settings",
    "store_location",
    "warn_if_pending",
    "with_flush",
    "with_overrides",
]
