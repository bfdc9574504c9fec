"""The `traces` table: one row per ask, appended by the reader and read by the dashboard.

Rows keep a few indexed columns plus the full trace as JSON (see `schema.trace_row`). The
caller (the `Store`) checks that the store is open/writable and serialises writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables


class TraceTable:
    def __init__(self, lance: LanceTables) -> None:
        self._lance = lance

    def write(self, trace: dict[str, Any]) -> None:
        self._lance.add(S.TRACES, S.trace_to_arrow(trace))

    def read(
        self,
        user_id: str | None = None,
        since: datetime | None = None,
        *,
        trace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Traces created at or after `since` (naive UTC, or aware and converted), oldest first."""
        where = F.conjunction(
            [
                F.eq("user_id", user_id) if user_id is not None else None,
                F.eq("trace_id", trace_id) if trace_id is not None else None,
                f"created_at >= {F.ts_literal(since)}" if since is not None else None,
            ]
        )
        rows = self._lance.rows(S.TRACES, where)
        rows.sort(key=lambda r: (r["created_at"], r["trace_id"]))
        return [S.trace_from_row(r) for r in rows]


__all__ = ["TraceTable"]
