"""`Memory`'s parts, public properties through 0.3, kept one more release as shims that warn, so
callers move to the public methods (`stats`, `users`, `reindex`, `optimize`, `read_only`) or the
internal seam (`hymem.api.internals`). Removing them is deleting this module and one base class.
"""

from __future__ import annotations

import warnings

from hymem.core.errors import StoreClosedError
from hymem.embed.embedders import Embedder
from hymem.indexes.ports import Storage
from hymem.llm import LazyRoles
from hymem.llm.roles import Roles
from hymem.search.hybrid import HybridSearcher


def _deprecated(name: str, instead: str) -> None:
    message = f"Memory.{name} is deprecated and will be removed; use {instead}"
    warnings.warn(message, DeprecationWarning, stacklevel=3)


class DeprecatedParts:
    """The shims; `Memory` supplies the parts they return."""

    _roles: LazyRoles
    _store: Storage
    _embedder: Embedder
    _searcher: HybridSearcher
    _closed: bool

    def _open_part(self) -> None:
        """A closed Memory's parts are refused, as `hymem.api.internals` refuses them."""
        if self._closed:
            raise StoreClosedError("this Memory was closed")

    @property
    def roles(self) -> Roles:
        """Deprecated: the model behind every role (`hymem.api.internals.roles_of`)."""
        _deprecated("roles", "hymem.api.internals.roles_of(memory)")
        self._open_part()
        return self._roles()

    @property
    def store(self) -> Storage:
        """Deprecated: the open store (`stats`, `users`, `reindex`, `optimize`, `read_only`
        cover what users need; `hymem.api.internals.store_of` the rest)."""
        _deprecated("store", "stats(), users(), reindex(), optimize(), read_only or store_of")
        self._open_part()
        return self._store

    @property
    def embedder(self) -> Embedder:
        """Deprecated: the embedder (`hymem.api.internals.embedder_of`)."""
        _deprecated("embedder", "hymem.api.internals.embedder_of(memory)")
        return self._embedder

    @property
    def searcher(self) -> HybridSearcher:
        """Deprecated: the searcher behind `search` (`hymem.api.internals.searcher_of`)."""
        _deprecated("searcher", "search() or hymem.api.internals.searcher_of(memory)")
        return self._searcher


__all__ = ["DeprecatedParts"]
