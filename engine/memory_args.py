"""Argument handling of the `Memory` facade that needs no Memory: config shortcuts, the
moment a question is asked, and whether close() runs while an error unwinds."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hymem.config import MemoryConfig
from hymem.embedders import Embedder
from hymem.time import parse_timestamp


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


def as_of_utc(value: datetime | str | None) -> datetime | None:
    """The API edge of `as_of`: any timestamp hymem accepts, normalised to naive UTC."""
    return None if value is None else parse_timestamp(value)


__all__ = ["as_of_utc", "exc_free", "with_overrides"]
