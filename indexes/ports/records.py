"""`Records`: Level-2 segments and Level-1 summaries read back by id, by filter or by page."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from hymem.core.filters import Filter
from hymem.core.types import SegmentRecord, SummaryRecord, SummaryStatus, TurnRecord
from hymem.indexes.protocol import ACTIVE_ONLY, SCAN_BATCH_ROWS, PageKey


@runtime_checkable
class Records(Protocol):
    """Reads of stored records; none of them searches (`DenseSearch`, `LexicalSearch`)."""

    def users(self) -> list[str]:
        """Sorted ids of users that have turns or summaries."""
        ...

    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]:
        """Segments in the order of `ids` (repeats and unknown ids skipped), without vectors."""
        ...

    def get_summaries(
        self,
        user_id: str,
        *,
        ids: Sequence[str] | None = None,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = False,
        memory_ids: Sequence[str] | None = None,
        fact_keys: Sequence[str] | None = None,
        keyed: bool = False,
    ) -> list[SummaryRecord]:
        """Summaries in the order of `ids` when given, else by (created_at, id); vectors are
        None unless `with_vectors`. `memory_ids` keeps the versions of those memories,
        `fact_keys` the summaries stating those facts (`SummaryRecord.fact_key`), `keyed` the
        summaries stating any recognised fact (the standing profile's rows)."""
        ...

    def iter_summaries(
        self,
        user_id: str | None = None,
        *,
        statuses: Sequence[SummaryStatus] | None = ACTIVE_ONLY,
        with_vectors: bool = True,
        batch_size: int = SCAN_BATCH_ROWS,
    ) -> Iterator[list[SummaryRecord]]:
        """Every matching summary (of one user, or all when None) in non-empty batches of at
        most `batch_size`, in no promised order: for scans that must not hold everything."""
        ...

    def page(
        self,
        user_id: str,
        level: str,
        *,
        after: PageKey | None = None,
        limit: int = 100,
        statuses: Sequence[str] | None = None,
        filters: Filter | None = None,
    ) -> list[TurnRecord | SegmentRecord | SummaryRecord]:
        """Up to `limit` (at most `paging.MAX_FETCH`: a page and one more, which tells the
        caller another page follows) records of the user at `level` ("turn",
        "segment" or "summary") in paging order (`indexes.paging`), strictly after the key
        `after`, without vectors. `statuses` keeps summaries (active/superseded/deleted) or
        turns (pending/stored) of those statuses; None keeps all; segments have none.
        `filters` keeps records whose metadata matches, before the page is cut."""
        ...


__all__ = ["Records"]
