"""The one seam into a `Memory`'s parts, for hymem's own tools and tests, not a stable API.

`Memory`'s public surface is what users call; its store, searcher, model roles and embedder
are private. hymem's CLI, server, evaluation and benchmarks (and the test suite, through
`hymem.testing`) still need them now and then: raw segments for a benchmark's scoring, the
store's metadata for `hymem stats`, the embedder to warm before a timed call. They reach them
here, by name, so every such reach is one grep away and none widens `Memory` itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hymem.embed.embedders import Embedder
from hymem.indexes.ports import Storage
from hymem.llm.roles import Roles
from hymem.ops.served import Served
from hymem.search.hybrid import HybridSearcher

if TYPE_CHECKING:
    from hymem.api.memory import Memory


def store_of(memory: Memory) -> Storage:
    """The open store (StoreClosedError once the Memory is closed)."""
    memory._check_open()
    return memory._store


def searcher_of(memory: Memory) -> HybridSearcher:
    """The hybrid searcher behind `Memory.search`."""
    return memory._searcher


def roles_of(memory: Memory) -> Roles:
    """The model behind every role, built now if it was not yet (a local model loads)."""
    memory._check_open()
    return memory._roles()


def embedder_of(memory: Memory) -> Embedder:
    """The embedder the Memory was opened with."""
    return memory._embedder


def served(memory: Memory) -> Served:
    """What the server's metrics and readiness read of `memory` (`hymem.ops.served`)."""
    return Served(config=memory.config, embedder=memory._embedder, store=lambda: store_of(memory))


__all__ = ["embedder_of", "roles_of", "searcher_of", "served", "store_of"]
