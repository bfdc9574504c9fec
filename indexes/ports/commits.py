"""`Commits`: every multi-table write (commit, versioning, withdrawal, erasure) and the right to
make them for a user."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from hymem.core.types import SegmentRecord, StatusChange, SummaryRecord


@runtime_checkable
class Commits(Protocol):
    """Journaled, atomic writes: readers see all of one or none of it."""

    @property
    def read_only(self) -> bool:
        """True when every write raises `ReadOnlyStoreError`."""
        ...

    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        """Hold the right to write `user_id` for the block (an object store's per-user lease;
        a folder's one writer always has it). Yields True when another writer wrote the user
        since this one last did: what the caller cached of the user must be reloaded."""
        ...

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
        traces, sleep-journal lines and lexical documents) and then rewrite what still held
        their bytes, so nothing of the user stays on disk. Journaled: a crash part-way is
        finished by the next open (or the next call). Returns the rows removed per table;
        erasing an unknown user removes nothing and is not an error."""
        ...


__all__ = ["Commits"]
