"""The in-memory twin's paging, erasure and version reads over `MemoryTables`, as functions the
`InMemoryStore` calls under its lock (promises: see `Storage.page`, `Storage.erase_user` and
`Storage.apply_summary_changes`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hymem.core.filters import Filter
from hymem.core.types import Level, SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.indexes import paging as P
from hymem.indexes.memory.tables import MemoryTables
from hymem.indexes.paging import PageKey
from hymem.indexes.store.commits import VersionStates, version_states

Record = TurnRecord | SegmentRecord | SummaryRecord


def check_page_key(level: str, after: PageKey | None) -> None:
    """The same type checks of a page key as the real store's SQL clause makes."""
    P.after_clause(level, after)


def page_of(
    t: MemoryTables,
    user_id: str,
    level: str,
    *,
    after: PageKey | None,
    limit: int,
    statuses: Sequence[str] | None,
    filters: Filter | None,
) -> list[Record]:
    tables: dict[str, dict[tuple[str, str], Any]] = {"turn": t.turns, "segment": t.segments}
    table = tables.get(level, t.summaries)
    allowed = None if statuses is None or level == "segment" else set(statuses)
    found: dict[PageKey, Record] = {}
    for rec in t.of_user(table, user_id):
        status = getattr(rec, "status", None)
        if allowed is not None and (status is None or status.value not in allowed):
            continue
        if filters is not None and not filters.matches(rec.metadata):
            continue
        key = P.key_of(level, rec.model_dump())
        if after is None or key > after:
            found[key] = rec
    keys = P.first(found, limit)
    return [found[k].model_copy(update=_no_vector(level)) for k in keys]


def erase_from(t: MemoryTables, user_id: str) -> dict[str, int]:
    removed = {
        "turns": len(t.of_user(t.turns, user_id)),
        "segments": len(t.of_user(t.segments, user_id)),
        "summaries": len(t.of_user(t.summaries, user_id)),
        "traces": sum(r["user_id"] == user_id for r in t.traces),
    }
    for level in (Level.SEGMENT, Level.SUMMARY):
        for rec in t.of_user(t.table(level), user_id):
            t.table(level).pop((user_id, rec.id))
            t.vectors.pop((level, user_id, rec.id), None)
            t.bm25.remove((level, user_id, rec.id))
    for key in [k for k in t.turns if k[0] == user_id]:
        del t.turns[key]
    t.traces[:] = [r for r in t.traces if r["user_id"] != user_id]
    t.sleep_lines.delete_user(user_id)
    return removed


def withdraw_from(
    t: MemoryTables, user_id: str, turn_ids: Sequence[str], segment_ids: Sequence[str]
) -> dict[str, int]:
    seg_ids = [s for s in dict.fromkeys(segment_ids) if (user_id, s) in t.segments]
    before = len(t.of_user(t.summaries, user_id))
    t.drop_segments(user_id, seg_ids)
    turns = [k for k in ((user_id, tid) for tid in dict.fromkeys(turn_ids)) if k in t.turns]
    for key in turns:
        del t.turns[key]
    for turn in t.of_user(t.turns, user_id):
        if turn.segment_id in seg_ids:
            turn.status, turn.segment_id = TurnStatus.PENDING, None
    summaries = before - len(t.of_user(t.summaries, user_id))
    return {"turns": len(turns), "segments": len(seg_ids), "summaries": summaries}


def stored_versions(
    t: MemoryTables, user_id: str, expect: Sequence[SummaryRecord]
) -> VersionStates:
    """The stored state of every version of the memories `expect` names (what a version
    change's compare-and-swap compares with)."""
    memories = {r.memory_id for r in expect}
    return version_states([r for r in t.of_user(t.summaries, user_id) if r.memory_id in memories])


def _no_vector(level: str) -> dict[str, None]:
    return {} if level == "turn" else {"vector": None}


__all__ = ["check_page_key", "erase_from", "page_of", "stored_versions"]
