"""Appending turns, grouped: concurrent `add()` calls of one process share a LanceDB commit.

`Store.append_turns` fences each user's lease in its caller's thread (the users' writers run
in parallel), then hands the turns here. `GroupCommit` makes the calls that queued while one
commit was in flight into the next commit: one LanceDB add of every caller's new turns, under
the store's write lock, so a worker serving many users writes many adds per commit instead of
one (on an object store each commit is ~6 requests in a row). Each caller's turns are checked
for repeats on their own (`TurnLog.new_of`, by (user_id, id)), and a turn two callers of one
group both send is written once, for the first. An outage resolves the whole group's rows
(`append_landed`): all landed or none, so every caller gets the same answer.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from hymem.core.errors import StoreUnavailableError
from hymem.core.types import TurnRecord
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.store.append_outcome import append_landed
from hymem.indexes.store.faults import storage_faults
from hymem.indexes.store.group_commit import GroupCommit

Call = tuple[Sequence[TurnRecord], Collection[str]]  # one caller's turns and its fresh ids


class TurnAppends:
    """The store's turn appends, one grouped LanceDB commit at a time."""

    def __init__(
        self,
        path: Path | str,
        lance: LanceTables,
        turns: TurnLog,
        write_lock: AbstractContextManager[Any],
        compactor: Any,
    ) -> None:
        self._path = path
        self._lance = lance
        self._turns = turns
        self._write_lock = write_lock
        self._compactor = compactor
        self.group: GroupCommit[Call, list[str]] = GroupCommit(self._commit)

    def append(self, turns: Sequence[TurnRecord], fresh_ids: Collection[str]) -> list[str]:
        """The ids of `turns` that were new and are now stored (see `Storage.append_turns`)."""
        return self.group.submit((turns, fresh_ids))

    def _commit(self, calls: Sequence[Call]) -> list[list[str]]:
        with self._write_lock:
            seen: set[tuple[str, str]] = set()
            per_call: list[list[TurnRecord]] = []
            with storage_faults(self._path, "appending turns"):
                for turns, fresh_ids in calls:
                    new = [
                        t
                        for t in self._turns.new_of(turns, fresh_ids=fresh_ids)
                        if (t.user_id, t.id) not in seen
                    ]
                    seen.update((t.user_id, t.id) for t in new)
                    per_call.append(new)
            rows = [t for new in per_call for t in new]
            try:
                with storage_faults(self._path, "appending turns"):
                    self._turns.add(rows)
            except StoreUnavailableError as exc:
                if not append_landed(self._path, self._lance, self._turns, rows, exc):
                    raise
            self._compactor.note_write(vector_tables=False)
        return [[t.id for t in new] for new in per_call]


__all__ = ["TurnAppends"]
