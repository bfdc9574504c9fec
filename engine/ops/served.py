"""What the server's metrics and readiness read of the Memory they serve, handed to them
explicitly (`hymem.api.internals.served`) rather than reached through the Memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hymem.core.config import MemoryConfig
from hymem.embed.embedders import Embedder
from hymem.indexes.ports import Storage


@dataclass(frozen=True, slots=True)
class Served:
    """`store()` is called at each read, so a closed Memory answers StoreClosedError then."""

    config: MemoryConfig
    embedder: Embedder
    store: Callable[[], Storage]


__all__ = ["Served"]
