"""A dense search ranks and reads its winners' rows from one state of the user's entry: a
version change committed between the two (a sleep retiring a summary for its successor) made
the memory vanish from the results, its old row read retired and its successor never ranked
(seen once as `test_readers_see_old_or_new_during_sleep` failing under load)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from hymem.core.types import Level
from hymem.indexes.dense.cache import STATUS_CODES, DenseCache
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.protocol import ACTIVE_ONLY, RowScope

from tests.dense_columns import cols


class CommitOnRelease:
    """entry.lock, running `commit` once, right after the first release that follows `arm()`:
    the moment a search's scan has let go of the entry and its rows are not read yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commit: Callable[[], None] | None = None
        self.fired = False

    def arm(self, commit: Callable[[], None]) -> None:
        self._commit = commit

    def acquire(self, *args: Any) -> bool:
        return self._lock.acquire(*args)

    def release(self) -> None:
        self._lock.release()
        commit, self._commit = self._commit, None
        if commit is not None:
            commit()
            self.fired = True

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def test_a_version_change_between_the_scan_and_the_rows_never_hides_the_memory() -> None:
    cache = DenseCache(budget_bytes=1 << 30, dim=8)
    cache.load("summaries", "u", lambda: (cols(5), None))
    entry = cache.get("summaries", "u")
    assert entry is not None
    lock = CommitOnRelease()
    entry.lock = lock  # type: ignore[assignment]
    old = cols(5)
    query = old.vectors[0]

    def retire_r0_for_its_successor() -> None:
        # One commit, as apply_summary_changes makes it: r0 retired, v2 (same vector) active.
        superseded = np.asarray([STATUS_CODES["superseded"]], dtype=np.int8)
        retired = cols(1, status=superseded)
        successor = cols(1, prefix="v", vectors=old.vectors[:1].copy())
        cache.upsert("summaries", "u", retired, None)
        cache.upsert("summaries", "u", successor, None)

    lock.arm(retire_r0_for_its_successor)
    rows = DenseRows(None, cache, 8, read_only=False)  # type: ignore[arg-type]
    scope = RowScope("u", level=Level.SUMMARY, statuses=ACTIVE_ONLY)
    found = rows.search(scope, query, 3, where="")
    assert lock.fired
    by_id = {r["id"]: r for r in found}
    # Before the change (r0 active) or after it (v0 active): never r0 read retired without v0.
    before = "r0" in by_id and by_id["r0"]["status"] == "active"
    after = "v0" in by_id and "r0" not in by_id
    assert before or after, found
    assert all(r["status"] == "active" for r in found)
