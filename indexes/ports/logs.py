"""The two append-only logs a store keeps beside the records: ask traces and the sleep journal."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class TraceLog(Protocol):
    """One row per ask (`hymem.read.traces`), read back by the dashboard and replay."""

    @property
    def read_only(self) -> bool:
        """True when `write_trace` raises `ReadOnlyStoreError` (a reader skips writing)."""
        ...

    def write_trace(self, trace: dict[str, Any]) -> None:
        """Append one ask's trace; it needs a `trace_id`, and `created_at` defaults to now."""
        ...

    def read_traces(
        self,
        user_id: str | None = None,
        since: datetime | None = None,
        *,
        trace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Traces (of one user, or all; or the one `trace_id`) created at or after `since`,
        by (created_at, trace_id), each as written plus its indexed columns."""
        ...


class LineLog(Protocol):
    """Append-only JSON lines per user, durable once `append` returns: where the sleep journal
    keeps its decisions (`hymem.sleep.journal`). A folder keeps them in a fsync'd file, an
    object store in a table, the in-memory twin in a list."""

    def lines(self, user_id: str | None = None) -> list[str]:
        """Every line (of one user, or of all), oldest first."""
        ...

    def append(self, rows: Sequence[tuple[str, str]]) -> None:
        """(user_id, line) pairs, in one durable write."""
        ...

    def delete_user(self, user_id: str) -> None:
        """Remove every line of the user (erasure); idempotent."""
        ...

    def close(self) -> None:
        """Release what the log holds open (its store closes it); idempotent."""
        ...


@runtime_checkable
class SleepLog(Protocol):
    """Where sleep journals its decisions."""

    def sleep_log(self) -> LineLog:
        """The store's `LineLog`; `Commits.erase_user` deletes the user's lines too."""
        ...


__all__ = ["LineLog", "SleepLog", "TraceLog"]
