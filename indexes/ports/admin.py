"""`Admin`: the store as a whole -- where it lives, what it was built with, how much it holds,
maintenance, other writers, and closing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Admin(Protocol):
    """What tools (CLI, metrics, readiness, the manager) ask of a whole store."""

    @property
    def path(self) -> Path | str:
        """Where the store lives (a folder, an object-store URI, or a label for an in-memory
        store)."""
        ...

    @property
    def read_only(self) -> bool: ...

    def meta(self) -> dict[str, Any]:
        """schema_version, embedder, dim, created_at: what the store was built with."""
        ...

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        """turns, pending_turns, segments, summaries, active_summaries, traces (of one user,
        or of everyone when None)."""
        ...

    def optimize(self) -> None:
        """Compact storage and build search indexes where they pay off (no visible change)."""
        ...

    def catch_up(self) -> dict[str, int]:
        """See other writers' commits now instead of within the staleness bound (an object
        store); {} where there are none."""
        ...

    def replica_lag_s(self) -> float | None:
        """Seconds since this worker's view last caught up with other writers' commits (+inf
        before the first); None where there is one writer (a folder, memory)."""
        ...

    def close(self) -> None:
        """Release the store (and the writer lock); idempotent."""
        ...


__all__ = ["Admin"]
