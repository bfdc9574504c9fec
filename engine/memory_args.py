"""Opening arguments of the `Memory` facade that need no Memory: config shortcuts, where the
store lives, its object-store settings and sleep journal, and whether close() runs while an
error unwinds. (A call's arguments are checked by `hymem.search.scope` and
`hymem.read.params`.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hymem.config import MemoryConfig
from hymem.embedders import Embedder
from hymem.indexes.location import StoreLocation, is_remote_uri, parse_location
from hymem.indexes.objects.open import RemoteSettings


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
    return type(config)(**{**config.model_dump(), **overrides})  # validated: ConfigError


def exc_free() -> bool:
    """close() runs the optional sleep only on a clean exit, never while an error unwinds."""
    import sys

    return sys.exc_info()[0] is None


__all__ = ["exc_free", "with_overrides"]


def store_location(
    path: str, storage_options: Mapping[str, str] | None, config: MemoryConfig
) -> StoreLocation:
    """Where `Memory(path)` lives. Options from the config (`HYMEM_STORAGE_OPTIONS`) apply
    to object-store URIs only; options passed with a local path are a mistake worth naming."""
    opts = dict(storage_options or {})
    if is_remote_uri(path):
        opts = {**(config.storage_options or {}), **opts}
    return parse_location(path, storage_options=opts, cache_dir=config.cache_dir)


def remote_settings(config: MemoryConfig) -> RemoteSettings:
    return RemoteSettings(
        lease_ttl_s=config.lease_ttl_s,
        lease_wait_s=config.lease_wait_s,
        lease_linger_s=config.lease_linger_s,
        refresh_s=config.refresh_s,
    )
