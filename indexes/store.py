"""The memory folder: LanceDB tables (source of truth) plus a derived Tantivy index.

CONTRACT (filled in by the foundation work; other modules code against these signatures):

Layout under `path`:
    lance/            LanceDB database: tables turns, segments, summaries, traces, meta
    tantivy/          lexical index over summaries and segments (derived; rebuildable)
    writer.lock       filelock held by the single writer for the store's lifetime
    meta.json         schema_version, embedder name, dimension, created_at (also mirrored in `meta`)

Rules:
  * Every read and write takes `user_id`; filters are built with escaped literals so a user id
    such as "x' OR '1'='1" matches only that literal user.
  * Writes go LanceDB first, then Tantivy. A crash between them is repaired on open (count or id
    mismatch between LanceDB and Tantivy -> rebuild Tantivy from LanceDB).
  * Writes are batched (one LanceDB add per table per call) to avoid fragment build-up.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from hymem.types import (
    Level,
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
    TurnStatus,
)

SCHEMA_VERSION = 1

TimeRange = tuple[datetime | None, datetime | None]


class Store:
    """Opened once per Memory. Thread-safe for concurrent readers; one writer process."""

    path: Path
    read_only: bool
    embedder_name: str
    dim: int

    @classmethod
    def open(
        cls, path: str | Path, *, embedder_name: str, dim: int, read_only: bool = False,
        vector_index_min_rows: int = 20_000,
    ) -> Store:
        """Create or open. Raises StoreLockedError, SchemaVersionError, EmbedderMismatchError."""
        raise NotImplementedError

    def close(self) -> None: ...

    # --- turns (write-ahead log) ---------------------------------------------------------
    def append_turns(self, turns: Sequence[TurnRecord]) -> list[str]:
        """Insert turns whose id is new (idempotent); returns ids actually inserted."""
        raise NotImplementedError

    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        """Turns ordered by seq."""
        raise NotImplementedError

    def next_seq(self, user_id: str) -> int:
        raise NotImplementedError

    # --- atomic commit of the write path -------------------------------------------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
    ) -> None:
        """Write segments + summaries (vectors set), index them, then mark turns stored with
        their segment_id. Atomic from the caller's view: after a crash, reopen either shows all
        of it searchable in both indexes or turns still pending (and no orphan rows are served)."""
        raise NotImplementedError

    # --- reads ---------------------------------------------------------------------------
    def get_segments(self, user_id: str, ids: Sequence[str]) -> list[SegmentRecord]: ...
    def get_summaries(
        self, user_id: str, *, ids: Sequence[str] | None = None,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        with_vectors: bool = False,
    ) -> list[SummaryRecord]: ...
    def iter_summaries(
        self, user_id: str | None = None, *, statuses: Sequence[SummaryStatus] | None = (
            SummaryStatus.ACTIVE,), with_vectors: bool = True, batch_size: int = 10_000,
    ) -> Iterator[list[SummaryRecord]]: ...
    def users(self) -> list[str]: ...
    def counts(self, user_id: str | None = None) -> dict[str, int]: ...

    # --- search primitives (fusion lives in indexes/hybrid.py) ---------------------------
    def dense_search(
        self, user_id: str, vector: Sequence[float], k: int, *, level: Level = Level.SUMMARY,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        time_range: TimeRange | None = None,
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) best first. `statuses` applies to summaries only."""
        raise NotImplementedError

    def lexical_search(
        self, user_id: str, text: str, k: int, *, level: Level = Level.SUMMARY,
        statuses: Sequence[SummaryStatus] | None = (SummaryStatus.ACTIVE,),
        time_range: TimeRange | None = None,
    ) -> list[tuple[str, float]]:
        """(id, BM25) best first. Any text is accepted; never raises on user text."""
        raise NotImplementedError

    # --- sleep-time versioning -----------------------------------------------------------
    def apply_summary_changes(
        self, user_id: str, new: Sequence[SummaryRecord], changes: Sequence[StatusChange]
    ) -> None:
        """Insert new versions, then update status/superseded_by/reason of old ones, then
        re-index. Readers see old or new, never neither (insert new before retiring old)."""
        raise NotImplementedError

    # --- traces --------------------------------------------------------------------------
    def write_trace(self, trace: dict[str, Any]) -> None: ...
    def read_traces(
        self, user_id: str | None = None, since: datetime | None = None
    ) -> list[dict[str, Any]]: ...

    # --- maintenance ---------------------------------------------------------------------
    def reindex(self) -> dict[str, int]:
        """Rebuild Tantivy from LanceDB; returns counts per level."""
        raise NotImplementedError

    def optimize(self) -> None:
        """Compact fragments; build the ANN index past vector_index_min_rows."""
