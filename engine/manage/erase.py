"""Erasing a user: everything of theirs off the disk, in an order a crash cannot leave unsafe.

The parts outside the store's tables go first (the sleep journal's entries, the model response
cache's entries), then the store erases its rows and purges the files that held them
(`indexes/store/erasure.py`, journaled and finished by the next open if a crash cuts it). So a crash
at any point leaves the user either fully erased or still present in the store, and erasing
again finishes the job; erasure is only reported done once every part is.

What it guarantees and what it cannot is written in the README ("Erasing a user").
"""

from __future__ import annotations

from pathlib import Path

from hymem.core.logging import get_logger
from hymem.indexes.protocol import Storage
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
    store: Storage, user_id: str, *, journal: SleepJournal, cache_dir: str | Path | None
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
