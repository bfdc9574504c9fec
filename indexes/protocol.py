"""The storage seam: everything hymem's engine asks of a memory store, as one typed Protocol.

Two implementations keep it: `hymem.indexes.store.store.Store` (LanceDB as the source of truth
plus a derived Tantivy index, in a folder or on an object store) and
`hymem.indexes.memory.store.InMemoryStore` (dicts and numpy, for fast tests).
`tests/conformance` runs one behavioural suite against both, so a component tested against the
in-memory store behaves the same on disk.

Promises that hold for every method:

* Isolation. Every per-user read and write matches `user_id` exactly; a hostile id such as
  `x' OR '1'='1` is a literal that matches only itself. Record ids are unique per user, not
  globally: two users may hold the same id without touching each other.
* Time. Every stored and compared instant is naive UTC (`hymem.core.time`): aware datetimes are
  converted, naive ones are taken as UTC. A `time_range` (since, until) keeps records whose
  [time_start, time_end] overlaps it, either bound may be None, a record with one bound is an
  instant, and an undated record never matches a bounded range.
* Statuses. `statuses` filters Level-1 summaries only (segments have none); None means every
  status; the default is active summaries only.
* Metadata. `filters` (a parsed `hymem.core.filters.Filter`) keeps the records whose
  metadata it matches, with `Filter.matches`'s semantics, inside the index before the top-k
  cut; None keeps all. A segment's metadata is its turns', a summary's its segment's.
* Lifecycle. Writes on a read-only store raise `ReadOnlyStoreError`; any call after `close()`
  raises `StoreClosedError` (close itself may be called twice).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from hymem.core.filters import Filter
from hymem.core.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
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


class LineLog(Protocol):
    """Append-only JSON lines per user, durable once `append` returns: where the sleep journal
    keeps its decisions (`hymem.sleep.journal`). A folder keeps them in a fsync'd file, an
    object store in a table, the in-memory twin in a list."""

    def lines(self, user_id: str | None = None) -> list[str]:
        """Every line (of one user, or of all), oldest first."""
        ...

    def append(self, rows: Sequence[tuple[str, str]]) -> None:
        """(user_id, line) pairs, in one durable write."""
        ...

    def delete_user(self, user_id: str) -> None:
        """Remove every line of the user (erasure); idempotent."""
        ...

    def close(self) -> None:
        """Release what the log holds open (its store closes it); idempotent."""
        ...


@runtime_checkable
class Storage(Protocol):
    """One memory store: turns (the write-ahead log), Level-2 segments, Level-1 summaries with
    their version history, and traces. Safe for concurrent readers; one writer."""

    @property
    def path(self) -> Path | str:
        """Where the store lives (a folder, an object-store URI, or a label for an in-memory
        store)."""
        ...

    @property
    def read_only(self) -> bool: ...

    @property
    def lexical_unavailable(self) -> bool:
        """True while lexical search cannot be served (its derived index is damaged or missing
        and, on a read-only handle, not yet rebuilt by the writer): `lexical_search` then finds
        nothing and hybrid search is dense only, its hits flagged."""
        ...

    def meta(self) -> dict[str, Any]:
        """schema_version, embedder, dim, created_at: what the store was built with."""
        ...

    def close(self) -> None:
        """Release the store (and the writer lock); idempotent."""
        ...

    # --- turns: the write-ahead log --------------------------------------------------------
    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        """The user's turns, optionally only `ids` and/or one status, ordered by (seq, id)."""
        ...

    def next_seq(self, user_id: str) -> int:
        """One past the user's highest turn seq; 0 for a user with no turns."""
        ...

    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        """Insert turns whose (user_id, id) is new, in one write; already-stored ones (and
        repeats within the call: the first wins) are skipped unchanged. Returns the ids
        actually inserted, so a retried add is idempotent. `fresh_ids` are ids the caller
        made for this call and knows to be unused (they embed a new sequence number): a store
        may skip looking them up, which is most of a one-turn add's cost."""
        ...

    # --- the write path's commit ---------------------------------------------------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
        *,
        changes: Sequence[StatusChange] = (),
    ) -> None:
        """Atomically make `segments` and `summaries` visible (dense and lexical) and mark
        `stored_turn_ids` stored, each with the first given segment that covers it.

        `changes`: status changes of summaries already stored (write-time consolidation: an
        old value ended, a repeat merged), applied as `apply_summary_changes` applies them
        but inside this commit, so they land with it or not at all (a commit rolled back
        restores the changed rows as they were); unknown ids are skipped.

        Every record must belong to `user_id` and carry a finite vector of the store's
        dimension (else `UserInputError`, nothing written). Re-committing a segment id replaces
        that segment and every summary linked to it, and a summary id replaces its earlier
        copy, so a re-flush after a crash never duplicates. A turn already stored in a segment
        not among `segments` is refused (`CommitConflictError`, nothing written): no turn is
        ever in two live segments. Readers see all of it or none."""
        ...

    # --- reads ---------------------------------------------------------------------------
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

    def users(self) -> list[str]:
        """Sorted ids of users that have turns or summaries."""
        ...

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        """turns, pending_turns, segments, summaries, active_summaries, traces (of one user,
        or of everyone when None)."""
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

    # --- search primitives (fusion lives in engine/search/hybrid.py) ---------------------------
    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        """Top-k rows (HIT_COLUMNS[level] + `_distance`, the cosine distance) nearest to
        `vector`, best first; filters apply before the cut. A vector of another dimension
        raises `StoreError`."""
        ...

    def dense_search(self, scope: RowScope, vector: Vector, k: int) -> list[tuple[str, float]]:
        """`dense_rows` as (id, cosine similarity), best first."""
        ...

    def dense_search_many(
        self, scope: RowScope, vectors: Sequence[Vector], k: int
    ) -> list[list[tuple[str, float]]]:
        """`dense_search` of each vector, in one pass where the store can (write-time
        consolidation asks for the neighbours of a whole flush's summaries at once)."""
        ...

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        """Top-k (id, BM25) over `hymem.indexes.lexical.analysis.terms`, best first. Any text is
        accepted and never raises; text with no content words matches nothing."""
        ...

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        """HIT_COLUMNS[level] rows of the user's `ids`, keyed by id; unknown ids are absent.
        A row's `metadata` is a dict."""
        ...

    # --- sleep-time versioning -----------------------------------------------------------
    def apply_summary_changes(
        self,
        user_id: str,
        new: Sequence[SummaryRecord],
        changes: Sequence[StatusChange],
        *,
        expect: Sequence[SummaryRecord] | None = None,
    ) -> None:
        """Insert `new` versions (replacing same-id copies), then set status, superseded_by,
        reason and evidence_id (and updated_at) of each changed summary; unknown ids are
        skipped. Atomic, idempotent, and readers see the old version or the new, never
        neither (nor both). Nothing is ever hard-deleted.

        `expect` makes it a compare-and-swap: every version of the memories it names, as the
        caller read them. If those memories now hold other versions, or one of them another
        status or superseded_by, nothing is written and VersionConflictError is raised (the
        check and the write are one step under the writer's lock)."""
        ...

    # --- erasure ---------------------------------------------------------------------------
    def withdraw(
        self, user_id: str, turn_ids: Sequence[str], segment_ids: Sequence[str]
    ) -> dict[str, int]:
        """Remove exactly these turns, these segments and every summary version linked to
        them (how an import that failed part-way is undone without touching what the user held
        before). Turns kept that a removed segment had stored read as pending again. All or
        nothing: journaled, finished by the next open after a crash. Returns how many of each
        were removed (ids not held count nothing)."""
        ...

    def erase_user(self, user_id: str) -> dict[str, int]:
        """Remove every record of the user (turns, segments, summaries of every version,
        traces and lexical documents) and then rewrite what still held
        their bytes, so nothing of the user stays on disk. Journaled: a crash part-way is
        finished by the next open (or the next call). Returns the rows removed per table;
        erasing an unknown user removes nothing and is not an error."""
        ...

    # --- the sleep journal's lines ------------------------------------------------------
    def sleep_log(self) -> LineLog:
        """Where sleep journals its decisions; `erase_user` deletes the user's lines too."""
        ...

    # --- traces --------------------------------------------------------------------------
    def write_trace(self, trace: dict[str, Any]) -> None:
        """Append one ask's trace; it needs a `trace_id`, and `created_at` defaults to now."""
        ...

    def read_traces(
        self,
        user_id: str | None = None,
        since: datetime | None = None,
        *,
        trace_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Traces (of one user, or all; or the one `trace_id`) created at or after `since`,
        by (created_at, trace_id), each as written plus its indexed columns."""
        ...

    # --- maintenance ---------------------------------------------------------------------
    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        """Rebuild the lexical index from the stored records; returns documents per level.
        `progress(n)` gets the number indexed since its previous call."""
        ...

    def optimize(self) -> None:
        """Compact storage and build search indexes where they pay off (no visible change)."""
        ...

    # --- many writers --------------------------------------------------------------------
    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        """Hold the right to write `user_id` for the block (an object store's per-user lease;
        a folder's one writer always has it). Yields True when another writer wrote the user
        since this one last did: what the caller cached of the user must be reloaded."""
        ...

    def catch_up(self) -> dict[str, int]:
        """See other writers' commits now instead of within the staleness bound (an object
        store); {} where there are none."""
        ...

    def replica_lag_s(self) -> float | None:
        """Seconds since this worker's view last caught up with other writers' commits (+inf
        before the first); None where there is one writer (a folder, memory)."""
        ...


__all__ = [
    "ACTIVE_ONLY",
    "HIT_COLUMNS",
    "SCAN_BATCH_ROWS",
    "LineLog",
    "PageKey",
    "Row",
    "RowScope",
    "Storage",
    "TimeRange",
    "Vector",
]
