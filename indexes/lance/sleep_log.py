"""The sleep journal's lines as a LanceDB table, for stores on an object store.

A folder keeps its sleep decisions in an fsync'd JSON-lines file (`hymem.sleep.journal`). An
object store has no appendable files, and many workers: each appends its decisions as rows of
`sleep_journal` (LanceDB commits concurrent appends safely), and a worker that takes a user's
lease from another re-reads that user's rows (`SleepJournal.reload_user`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables

SLEEP_LOG = "sleep_journal"


def sleep_log_schema() -> pa.Schema:
    return pa.schema([pa.field("user_id", pa.string()), pa.field("line", pa.string())])


class TableLines:
    """Journal lines (one JSON entry each) per user, in a LanceDB table."""

    def __init__(self, lance: LanceTables, *, read_only: bool) -> None:
        self._lance = lance
        self._present = lance.open_existing(SLEEP_LOG)
        if not self._present and not read_only:
            lance.ensure(SLEEP_LOG, sleep_log_schema())
            self._present = True

    def lines(self, user_id: str | None = None) -> list[str]:
        if not self._present:
            return []
        where = None if user_id is None else F.eq("user_id", user_id)
        return [r["line"] for r in self._lance.rows(SLEEP_LOG, where, ["line"])]

    def append(self, rows: Sequence[tuple[str, str]]) -> None:
        """(user_id, line) pairs, in one commit: durable once this returns."""
        data = pa.Table.from_pylist(
            [{"user_id": u, "line": line} for u, line in rows], schema=sleep_log_schema()
        )
        self._lance.add(SLEEP_LOG, data)

    def delete_user(self, user_id: str) -> None:
        if self._present:
            self._lance.delete(SLEEP_LOG, F.eq("user_id", user_id))

    def close(self) -> None:
        """Rows are committed as they are appended: nothing is held open."""


__all__ = ["SLEEP_LOG", "TableLines", "sleep_log_schema"]
