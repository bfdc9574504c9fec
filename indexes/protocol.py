"""The shared vocabulary of the storage ports (`hymem.indexes.ports`): the scope of a search
primitive, its rows and vectors, and the defaults every store applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from hymem.core.filters import Filter
from hymem.core.types import (
    Level,
    SummaryStatus,
)

TimeRange = tuple[datetime | None, datetime | None]
Row = dict[str, Any]
Vector = Sequence[float] | np.ndarray  # a query vector as the embedder returns it, or a list
# Where a page of records starts (`hymem.indexes.paging`): (seq, id) for turns, (created_at, id)
# for segments and summaries.
PageKey = tuple[int | datetime, str]

# The columns of a search row (`dense_rows`, `hydrate`), per level: what a Hit is built from.
HIT_COLUMNS: dict[Level, list[str]] = {
    Level.SUMMARY: [
        "id",
        "user_id",
        "text",
        "segment_id",
        "time_start",
        "time_end",
        "status",
        "source_turn_ids",
        "attribution",
        "metadata",
        "memory_id",
        "valid_from",
        "valid_to",
    ],
    Level.SEGMENT: ["id", "user_id", "text", "turn_ids", "time_start", "time_end", "metadata"],
}

ACTIVE_ONLY: tuple[SummaryStatus, ...] = (SummaryStatus.ACTIVE,)
# Default batch of `iter_summaries`: ~15 MB of 384-d float32 vectors, so a scan over any number
# of summaries holds little memory yet costs few round trips.
SCAN_BATCH_ROWS = 10_000


@dataclass(frozen=True, slots=True)
class RowScope:
    """Which rows a search primitive may return: one user's, at one level, of some statuses,
    within a time range, matching a metadata `Filter` -- all applied inside the index, before
    any top-k cut. Built once by the caller (`hymem.search` builds it from a checked
    `SearchScope`); every store takes it as given."""

    user_id: str
    level: Level = Level.SUMMARY
    statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY
    time_range: TimeRange | None = None
    filters: Filter | None = None
    # A search as of this moment (naive UTC): besides the statuses asked for, a summary
    # superseded by a newer value of its fact matches while that value was not yet said
    # (`valid_to` after the moment): what was true then, not only what is true now.
    valid_at: datetime | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", Level(self.level))

    def admits(self, status: str, valid_to: datetime | None) -> bool:
        """Whether a summary of `status` (ended at `valid_to`) is in the scope's statuses,
        validity included: the one rule every store's filters implement."""
        if self.statuses is None or status in {SummaryStatus(s).value for s in self.statuses}:
            return True
        return (
            self.valid_at is not None
            and status == SummaryStatus.SUPERSEDED.value
            and valid_to is not None
            and valid_to > self.valid_at
        )


__all__ = [
    "ACTIVE_ONLY",
    "HIT_COLUMNS",
    "SCAN_BATCH_ROWS",
    "PageKey",
    "Row",
    "RowScope",
    "TimeRange",
    "Vector",
]
