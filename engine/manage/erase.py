"""Erasing a user: everything of theirs off the disk, in an order a crash cannot leave unsafe.

The parts outside the store's tables go first (the sleep journal's entries, the model response
cache's entries), then the store erases its rows and purges the files that held them
(`indexes/store/erasure.py`, journaled and finished by the next open if a crash cuts it). So a crash
at any point leaves the user either fully erased or still present in the store, and erasing
again finishes the job; erasure is only reported done once every part is.

Calls racing the erase (`Manager.erase_user` holds the user for its whole length):
* in this Memory, the user's asks, contexts and replays are refused with ErasureInProgressError
  while it runs, and the ones already running are waited out first, their traces written, so
  they are erased too (`hymem.read.fence`); adds, flushes, sleep and corrections of the user wait
  and run after it, as new calls on an erased user;
* in other workers of an object store, which do not see this fence: a trace row of the user
  that lands while the store erases is swept by the erase's last step (`Eraser.erase`). A trace
  of an ask another worker is still answering when the erase returns lands after it and stays
  until the user is erased again: stop serving a user's asks everywhere before erasing them.
  Their commits of the user wait for the user's lease, which the erase holds.

What it guarantees and what it cannot is written in docs/library.md ("Erasing a user").
"""

from __future__ import annotations

from pathlib import Path

from hymem.core.logging import get_logger
from hymem.indexes.ports import Commits
from hymem.llm.cache import ResponseCache
from hymem.sleep.journal import SleepJournal
from pydantic import BaseModel

log = get_logger("hymem.manage.erase")


class ErasureReport(BaseModel):
    """What one erase removed (all zero for a user the memory never held)."""

    user_id: str
    turns: int = 0
    segments: int = 0
    summaries: int = 0  # every version
    traces: int = 0
    sleep_journal_entries: int = 0
    cached_responses: int = 0


def erase_user(
    store: Commits, user_id: str, *, journal: SleepJournal, cache_dir: str | Path | None
) -> ErasureReport:
    sleep_entries = journal.forget_user(user_id)
    cached = ResponseCache(cache_dir).forget_user(user_id) if cache_dir else 0
    rows = store.erase_user(user_id)
    report = ErasureReport(
        user_id=user_id,
        turns=rows.get("turns", 0),
        segments=rows.get("segments", 0),
        summaries=rows.get("summaries", 0),
        traces=rows.get("traces", 0),
        sleep_journal_entries=sleep_entries,
        cached_responses=cached,
    )
    log.info("memory.erased", **report.model_dump())
    return report


__all__ = ["ErasureReport", "erase_user"]
