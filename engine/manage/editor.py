"""Reading and correcting what a memory holds: `get`, `get_all`, `update` and `delete` (the
version change behind `restore` is `hymem.sleep.restore`'s, as sleep journals it).

Corrections are versions, never in-place edits: `update` writes a new active version of the
summary (re-embedded, re-indexed, `previous_id` linked, origin "user") and retires the old one;
`delete` writes a deleted version (a tombstone, origin "user") that retires the active one, so
`history()` shows who changed what and when, and `restore()` undoes either. Each goes through
the store's journaled `apply_summary_changes`, so a crash leaves the old version or the new one
visible, never neither; they hold the `WriteGuard`'s versions lock and the user's right to
write, as sleep does, so a correction never races a sleep rewriting the same user's summaries.

A memory has at most one active version. Each change retires every active version of the
memory, and is a compare-and-swap on the versions it was planned from (`expect`): a writer
whose read is no longer current (another worker's correction got there first) writes nothing
and gets VersionConflictError, as does a correction the memory's state does not allow (an
update of a deleted memory, a restore of its active version).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import cast

import numpy as np
from hymem.core.errors import (
    NotFoundError,
    ReadOnlyStoreError,
    UserInputError,
    VersionConflictError,
)
from hymem.core.filters import Filter
from hymem.core.types import (
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    SummaryStatus,
    TurnRecord,
)
from hymem.embed.embedders import Embedder
from hymem.indexes import paging as P
from hymem.manage.cursor import PageCursors
from hymem.manage.models import MemoryItem, Page, RecordLevel, StatusFilter
from hymem.manage.ports import EditStore
from hymem.write.guard import WriteGuard
from pydantic import SecretStr

# The statuses each level can be listed by; the first is the default.
_STATUSES: dict[str, tuple[str, ...]] = {
    "summary": ("active", "superseded", "deleted", "all"),
    "segment": ("all",),
    "turn": ("all", "pending", "stored"),
}


def user_version_id(previous_id: str, version: int, action: str, text: str) -> str:
    """Deterministic, so an update retried after a crash writes the same version again."""
    digest = hashlib.sha256(f"user\x1f{action}\x1f{previous_id}\x1f{version}\x1f{text}".encode())
    return "sum-u-" + digest.hexdigest()[:32]


def check_listing(level: object, status: object, limit: object) -> tuple[RecordLevel, str, int]:
    """Validate get_all's arguments; returns (level, status, limit) with defaults applied."""
    if level not in _STATUSES:
        raise UserInputError(f"unknown level {level!r}: use summary, segment or turn")
    allowed = _STATUSES[str(level)]
    status = allowed[0] if status is None else status
    if status not in allowed:
        raise UserInputError(
            f"status {status!r} does not apply to {level}s: use one of {', '.join(allowed)}"
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= P.MAX_PAGE:
        raise UserInputError(f"limit must be an integer from 1 to {P.MAX_PAGE}")
    return cast(RecordLevel, level), str(status), limit  # level is one of _STATUSES' keys


class Editor:
    """Reads and corrections of one store's summaries; corrections run under `guard`."""

    def __init__(
        self,
        store: EditStore,
        embedder: Embedder,
        *,
        guard: WriteGuard,
        clock: Callable[[], datetime],
        cursor_secret: SecretStr | None = None,
    ) -> None:
        """`cursor_secret` signs get_all's cursors (`MemoryConfig.cursor_secret`); None: the
        store's own key (`PageCursors.of`)."""
        self._store = store
        self._embedder = embedder
        self._guard = guard
        self._clock = clock
        self._cursors = PageCursors.of(store.meta(), cursor_secret)

    # --- reads ----------------------------------------------------------------------------
    def summary(self, memory_id: str, user_id: str, *, with_vectors: bool = False) -> SummaryRecord:
        found = self._store.get_summaries(
            user_id, ids=[memory_id], statuses=None, with_vectors=with_vectors
        )
        if not found:
            raise NotFoundError("memory", memory_id)
        return found[0]

    def versions(self, ref: str, user_id: str) -> list[SummaryRecord]:
        """Every version of the memory `ref` names, oldest first. `ref` is a memory id (what
        `add`, `search` and `update` hand out, stable across versions) or any version's id
        (what 0.2 handed out), so an id an agent kept keeps working."""
        found = self._store.get_summaries(user_id, memory_ids=[ref], statuses=None)
        if not found:
            one = self._store.get_summaries(user_id, ids=[ref], statuses=None)
            if not one:
                raise NotFoundError("memory", ref)
            found = (
                self._store.get_summaries(user_id, memory_ids=[one[0].memory_id], statuses=None)
                or one
            )
        return sorted(found, key=lambda r: (r.version, r.created_at, r.id))

    def get(self, memory_id: str, user_id: str) -> MemoryItem:
        """The memory's current version (its active one, else its latest), or, for a version
        id that is not a memory id, that very version."""
        versions = self.versions(memory_id, user_id)
        if any(v.memory_id == memory_id for v in versions):
            rec = current(versions)
        else:
            rec = next(v for v in versions if v.id == memory_id)
        turns = (
            self._store.get_turns(user_id, ids=rec.source_turn_ids) if rec.source_turn_ids else []
        )
        segments = self._store.get_segments(user_id, [rec.segment_id])
        return MemoryItem(
            summary=rec,
            version_ids=[r.id for r in versions],
            source_turns=turns,
            segment=segments[0] if segments else None,
            segments=[*segments, *self._segments_elsewhere(user_id, segments, turns)],
        )

    def _segments_elsewhere(
        self, user_id: str, own: list[SegmentRecord], turns: list[TurnRecord]
    ) -> list[SegmentRecord]:
        """The segments holding the memory's turns its own segment lacks (a repeat merged
        from another segment, at write time or in sleep), found by each stored turn's
        segment link; read only when there are such turns."""
        held = {t for seg in own for t in seg.turn_ids}
        ids = [t.segment_id for t in turns if t.id not in held and t.segment_id]
        skip = {seg.id for seg in own}
        wanted = [i for i in dict.fromkeys(ids) if i not in skip]
        return self._store.get_segments(user_id, wanted) if wanted else []

    def get_all(
        self,
        user_id: str,
        *,
        level: RecordLevel | str = "summary",
        status: StatusFilter | str | None = None,
        limit: int = 100,
        cursor_text: str | None = None,
        filters: Filter | None = None,
    ) -> Page:
        lvl, st, limit = check_listing(level, status, limit)
        after = self._cursors.decode(lvl, user_id, cursor_text)
        statuses = None if st == "all" else [st]
        # One more than asked: whether a next page exists, without an empty last page.
        rows = self._store.page(
            user_id, lvl, after=after, limit=limit + 1, statuses=statuses, filters=filters
        )
        items, more = rows[:limit], len(rows) > limit
        nxt = None
        if more:
            nxt = self._cursors.encode(lvl, user_id, P.key_of(lvl, items[-1].model_dump()))
        return Page(level=lvl, items=items, next_cursor=nxt)

    # --- corrections ------------------------------------------------------------------------
    def update(self, memory_id: str, text: str, user_id: str) -> SummaryRecord:
        """A new active version of the memory with `text`; its memory id stays the same."""
        self._check_writable()
        with self._guard.versions(user_id):
            versions = self.versions(memory_id, user_id)
            old = self._active(memory_id, "update", versions)
            if old.text == text:
                return old  # nothing to correct: no new version
            vector = np.asarray(self._embedder.embed([text]))[0].tolist()
            new = self._next_version(old, versions, "update", text=text, vector=vector)
            self._replace(user_id, versions, new, "updated by the user")
            return new.model_copy(update={"vector": None})

    def delete(self, memory_id: str, user_id: str) -> SummaryRecord:
        """A deleted version (tombstone) retires the memory's active one; deleting a memory
        that is deleted already returns its tombstone."""
        self._check_writable()
        with self._guard.versions(user_id):
            versions = self.versions(memory_id, user_id)
            latest = current(versions)
            if latest.status is SummaryStatus.DELETED:
                return latest  # deleting twice is not an error
            old = self._active(memory_id, "delete", versions)
            full = self.summary(old.id, user_id, with_vectors=True)
            tomb = self._next_version(
                full,
                versions,
                "delete",
                status=SummaryStatus.DELETED,
                reason="deleted by the user",
            )
            self._replace(user_id, versions, tomb, "deleted by the user")
            return tomb.model_copy(update={"vector": None})

    def _replace(
        self, user_id: str, versions: list[SummaryRecord], new: SummaryRecord, reason: str
    ) -> None:
        """Write `new` and retire every active version of the memory (one, unless a crash of
        an older hymem left more) in one change, provided its versions are still `versions`."""
        retire = [
            StatusChange(
                summary_id=v.id,
                status=SummaryStatus.SUPERSEDED,
                superseded_by=new.id,
                reason=reason,
            )
            for v in versions
            if v.status is SummaryStatus.ACTIVE
        ]
        self._store.apply_summary_changes(user_id, [new], retire, expect=versions)

    @staticmethod
    def _active(memory_id: str, action: str, versions: list[SummaryRecord]) -> SummaryRecord:
        """The memory's active version; a memory without one (deleted, or every version
        superseded by another memory's newer fact) cannot be corrected until restored: its
        state conflicts with the correction, whoever changed it last."""
        latest = current(versions)
        if latest.status is not SummaryStatus.ACTIVE:
            hint = f" (replaced by {latest.superseded_by!r})" if latest.superseded_by else ""
            raise VersionConflictError(
                f"memory {memory_id!r} is {latest.status.value}{hint}: restore() one of its "
                f"versions ({', '.join(v.id for v in versions)}) before you {action} it"
            )
        return latest

    def _next_version(
        self, old: SummaryRecord, versions: list[SummaryRecord], action: str, **changes: object
    ) -> SummaryRecord:
        """The version after the memory's newest (a restore can make an older one current, so
        `old.version + 1` may be taken already)."""
        now = self._clock()
        text = str(changes.get("text", old.text))
        version = max(v.version for v in versions) + 1
        return old.model_copy(
            update={
                "id": user_version_id(old.id, version, action, text),
                "version": version,
                "previous_id": old.id,
                "superseded_by": None,
                "evidence_id": None,
                "reason": None,
                "status": SummaryStatus.ACTIVE,
                "origin": "user",
                "created_at": now,
                "updated_at": now,
                **changes,
            }
        )

    def _check_writable(self) -> None:
        if self._store.read_only:
            raise ReadOnlyStoreError("this memory was opened read-only: corrections write")


def current(versions: list[SummaryRecord]) -> SummaryRecord:
    """A memory's current version: its active one (the newest, should a crash have left two),
    else its newest version (a tombstone, or a fact superseded by a newer value)."""
    active = [v for v in versions if v.status is SummaryStatus.ACTIVE]
    return (active or versions)[-1]


__all__ = ["Editor", "check_listing", "current", "user_version_id"]
