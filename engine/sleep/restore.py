"""Undoing a merge or a delete: one version made its memory's one active version again.

Sleep's `restore` applies it and journals an override, so the next sleep, on the same inputs,
does not redo what was undone; like every version change it is a compare-and-swap on the
versions it read (`Commits.apply_summary_changes(..., expect=...)`).
"""

from __future__ import annotations

from hymem.core.errors import NotFoundError, VersionConflictError
from hymem.core.types import StatusChange, SummaryRecord, SummaryStatus
from hymem.sleep.ports import SleepStore


def restore_version(store: SleepStore, user_id: str, version_id: str) -> SummaryRecord:
    """Make `version_id` its memory's one active version: reactivate it, and retire every other
    active version of the memory and the active version that replaced it in another memory
    (where a merge carried it), all in one compare-and-swap on the versions read. A tombstone
    restored brings the memory back with the text it had when it was deleted.

    The caller holds the versions lock and the user's right to write (`WriteGuard.versions`).
    NotFoundError for an id the user does not hold; VersionConflictError for the memory's
    active version (nothing to restore) or when another writer changed the memory meanwhile."""
    found = store.get_summaries(user_id, ids=[version_id], statuses=None)
    if not found:
        raise NotFoundError("memory", version_id)
    target = found[0]
    versions = store.get_summaries(user_id, memory_ids=[target.memory_id], statuses=None)
    retire = [v for v in versions if v.status is SummaryStatus.ACTIVE and v.id != target.id]
    if target.status is SummaryStatus.ACTIVE and not retire:
        raise VersionConflictError(
            f"version {version_id!r} is the active version of memory {target.memory_id!r} "
            "already: nothing to restore"
        )
    expect = list(versions)
    head = _replacement(store, user_id, target, versions)
    if head is not None:
        retire.append(head)
        expect += store.get_summaries(user_id, memory_ids=[head.memory_id], statuses=None)
    changes = [
        StatusChange(
            summary_id=v.id,
            status=SummaryStatus.SUPERSEDED,
            superseded_by=target.id,
            reason=f"restored {target.id}",
        )
        for v in retire
    ]
    if target.status is not SummaryStatus.ACTIVE:
        changes.insert(0, StatusChange(summary_id=target.id, status=SummaryStatus.ACTIVE))
    store.apply_summary_changes(user_id, [], changes, expect=expect)
    return store.get_summaries(user_id, ids=[target.id], statuses=None)[0]


def _replacement(
    store: SleepStore, user_id: str, target: SummaryRecord, versions: list[SummaryRecord]
) -> SummaryRecord | None:
    """The active version `target`'s chain of superseded_by links ends in, when it belongs to
    another memory (a merge); the memory's own active versions are retired anyway."""
    known = {v.id: v for v in versions}
    cur, seen = target, {target.id}
    while cur.superseded_by and cur.superseded_by not in seen:
        nxt = known.get(cur.superseded_by)
        if nxt is None:
            rows = store.get_summaries(user_id, ids=[cur.superseded_by], statuses=None)
            if not rows:
                return None
            nxt = rows[0]
        if nxt.status is SummaryStatus.ACTIVE:
            return nxt if nxt.memory_id != target.memory_id else None
        seen.add(nxt.id)
        cur = nxt
    return None


__all__ = ["restore_version"]
