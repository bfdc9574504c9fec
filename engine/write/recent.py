"""The summaries this writer committed lately, whole and with vectors, for write-time
consolidation.

A new summary's near neighbours are mostly summaries the same writer wrote a few flushes
before (a conversation repeats itself within days, not months). Reading each neighbour's full
row back from LanceDB cost ~20 ms a flush that found one, the larger part of what
consolidation cost the live write path (2.5 s of 122 reads on a LongMemEval history). The
writer already held those rows when it committed them, so it keeps the last few thousand.

A kept copy is trusted only while the store still shows it as written: `vouched` checks each
against the row the store serves (`DenseSearch.hydrate`, from the dense cache in memory where one
is loaded): active, same text, source turns, memory, validity and metadata. A row changed
since by anyone (a sleep, another worker, an update, an erasure) no longer matches and is read
from the store as before, so the copy can make a decision cheaper, never different.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC
from typing import Any

from hymem.core.types import SummaryRecord, SummaryStatus

# A record holds its vector as a Python list: 384 x (8 + 24) bytes, ~12 KB with its text, so
# 1,024 records are ~13 MB, and cover the last few hundred turns of a live conversation.
RECENT_RECORDS = 1024


class RecentSummaries:
    """A bounded, least-recently-written-first memory of committed summaries, by id."""

    def __init__(self, limit: int = RECENT_RECORDS) -> None:
        self._limit = limit
        self._records: OrderedDict[str, SummaryRecord] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, records: Iterable[SummaryRecord]) -> None:
        """Keep the active, vectored records of a commit that succeeded."""
        with self._lock:
            for rec in records:
                if rec.vector is None or rec.status is not SummaryStatus.ACTIVE:
                    self._records.pop(rec.id, None)
                    continue
                self._records[rec.id] = rec
                self._records.move_to_end(rec.id)
            while len(self._records) > self._limit:
                self._records.popitem(last=False)

    def forget(self, ids: Iterable[str]) -> None:
        with self._lock:
            for i in ids:
                self._records.pop(i, None)

    def candidates(self, user_id: str, ids: Sequence[str]) -> dict[str, SummaryRecord]:
        """The kept records of `ids` that belong to `user_id` (not yet vouched for)."""
        with self._lock:
            found = {i: self._records.get(i) for i in ids}
        return {i: r for i, r in found.items() if r is not None and r.user_id == user_id}

    def __len__(self) -> int:
        return len(self._records)


def vouched(
    kept: Mapping[str, SummaryRecord], rows: Mapping[str, Mapping[str, Any]]
) -> dict[str, SummaryRecord]:
    """The kept records whose stored row (`DenseSearch.hydrate`) still says what they say."""
    return {i: rec for i, rec in kept.items() if (row := rows.get(i)) and _same(rec, row)}


def _same(rec: SummaryRecord, row: Mapping[str, Any]) -> bool:
    return (
        row.get("status") == SummaryStatus.ACTIVE.value
        and row.get("text") == rec.text
        and list(row.get("source_turn_ids") or ()) == rec.source_turn_ids
        and (row.get("memory_id") or rec.id) == rec.memory_id
        and row.get("segment_id") == rec.segment_id
        and _naive(row.get("valid_from")) == _naive(rec.valid_from)
        and row.get("valid_to") is None
        and rec.valid_to is None
        and dict(row.get("metadata") or {}) == dict(rec.metadata)
    )


def _naive(when: Any) -> Any:
    """Stores hand times back naive UTC; a record may hold them aware."""
    if when is None or getattr(when, "tzinfo", None) is None:
        return when
    return when.astimezone(UTC).replace(tzinfo=None)


__all__ = ["RECENT_RECORDS", "RecentSummaries", "vouched"]
