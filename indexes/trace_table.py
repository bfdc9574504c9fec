"""The `traces` table: one row per ask, appended by the reader and read by the dashboard."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hymem.indexes import filters as F
from hymem.indexes import schema as S
from hymem.time import to_utc


class TraceMixin:
    """Trace rows keep a few indexed columns plus the full trace as JSON (see schema.py)."""

    def write_trace(self, trace: dict[str, Any]) -> None:
        self._check_writable()
        with self._write_lock:
            self._lance.add(S.TRACES, S.trace_to_arrow(trace))

    def read_traces(
        self, user_id: str | None = None, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        self._check_open()
        where = F.conjunction(
            [
                F.eq("user_id", user_id) if user_id is not None else None,
                f"created_at >= {F.ts_literal(to_utc(since))}" if since is not None else None,
            ]
        )
        rows = self._lance.rows(S.TRACES, where)
        rows.sort(key=lambda r: (r["created_at"], r["trace_id"]))
        return [S.trace_from_row(r) for r in rows]
