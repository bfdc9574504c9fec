"""What keeps a store's Tantivy index in step with LanceDB, as one small Protocol.

Two implementations: a folder's `sync.LexicalSync` (one writer updates Tantivy inside each
commit and records the table versions it matched) and an object store's
`hymem.indexes.objects.replica_sync.ReplicaSync` (this worker's index is a replica caught up
from the fragments other workers committed). The commit writer, the compactor, recovery and
erasure talk only to this Protocol, so they never ask which kind of store they serve.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class LexicalFeed(Protocol):
    def record(self) -> None:
        """After this process's own commit: the index now matches LanceDB."""
        ...

    def rebuild(
        self, progress: Callable[[int], None] | None = None, *, fresh: bool = False
    ) -> dict[str, int]:
        """Re-index everything from LanceDB (a new folder when `fresh`); documents per level."""
        ...

    def after_purge(self) -> None:
        """An erasure purged rows: no index segment may keep their bytes."""
        ...

    def unusable(self) -> str | None:
        """Why the index cannot be trusted at all, or None."""
        ...

    def disagreement(self) -> str | None:
        """Why the index disagrees with LanceDB (so it must be rebuilt), or None."""
        ...

    def disable(self, reason: str) -> None:
        """Stop lexical search (a read-only handle may not rebuild)."""
        ...

    def catch_up(self) -> dict[str, int]:
        """See other writers' commits now; what the catch-up did ({} with no other writers)."""
        ...

    def maybe_catch_up(self) -> None:
        """Before a search: catch up if the staleness bound has passed (no-op with one writer)."""
        ...

    def lag_s(self) -> float | None:
        """Seconds since this view last caught up with other writers' commits (+inf before
        its first catch-up); None with one writer, whose view is never behind."""
        ...


__all__ = ["LexicalFeed"]
