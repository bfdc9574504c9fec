"""What the management calls ask of a store, narrower than the whole `Storage` the `Manager`
holds: each helper is typed with these, or with one port."""

from __future__ import annotations

from typing import Protocol

from hymem.indexes.ports import Admin, Commits, Records, Turns


class AuditStore(Turns, Records, Protocol):
    """The audit reads turns, segments and summaries, and writes nothing."""


class EditStore(Turns, Records, Commits, Admin, Protocol):
    """Edits, export and import: records read and written, the store's `meta` checked (the
    embedder an import's vectors must match)."""


__all__ = ["AuditStore", "EditStore"]
