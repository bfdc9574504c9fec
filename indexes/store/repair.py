"""Settling a journal that cannot be read, by the rows' own state.

A `journal.json` that is garbage, truncated, not an object, or names an unknown operation or
lacks its fields still means a multi-table write was in flight, only not which. The rows say
enough to settle it the safe way: roll back whatever is unfinished and keep every row that is
complete and consistent.

* A segment covering turns that are all still pending was written by a commit that never
  reached its last step (marking those turns stored): it goes, with its summaries. The next
  flush summarises the turns again (ids are deterministic, so the same rows come back).
* A stored turn whose segment is gone (a re-commit deletes the old copy first) is pending again.
* A summary whose segment is gone goes too: the turns it came from are pending again.

Sleep's status changes need nothing: its new versions are complete rows, and the versions they
replace keep their status until the next sleep replays its own journal. Nothing else is touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hymem.core.types import StatusChange, SummaryStatus, TurnStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.store.commits import CommitWriter


def _strs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _changes(value: Any) -> bool:
    if not isinstance(value, list):
        return False
    try:
        for change in value:
            StatusChange.model_validate(change)
    except ValueError:  # pydantic's ValidationError
        return False
    return True


def _priors(value: Any) -> bool:
    """Rows' status columns as a journal keeps them: each with its id and a known status."""
    if not isinstance(value, list):
        return False
    statuses = {s.value for s in SummaryStatus}
    return all(
        isinstance(p, dict) and isinstance(p.get("id"), str) and p.get("status") in statuses
        for p in value
    )


def well_formed(entry: dict[str, Any]) -> bool:
    """Whether `entry` is a journal entry `Recovery` knows how to settle exactly."""
    if not isinstance(entry.get("user_id"), str):
        return False
    if entry.get("op") == "commit_segments":
        turns = entry.get("turns")
        return (
            _strs(entry.get("segment_ids"))
            and _strs(entry.get("summary_ids"))
            and isinstance(turns, dict)
            and all(isinstance(s, str | None) for s in turns.values())
            # the write-time consolidation's status changes, folded into this commit (journals
            # written by hymem 0.3.0 and earlier have neither key)
            and _changes(entry.get("changes", []))
            and _priors(entry.get("prior", []))
        )
    if entry.get("op") == "apply_summary_changes":
        return _strs(entry.get("new_ids")) and _changes(entry.get("changes"))
    if entry.get("op") == "withdraw":
        return _strs(entry.get("turn_ids")) and _strs(entry.get("segment_ids"))
    return entry.get("op") == "erase_user"


@dataclass
class RowRepair:
    """What settling by rows changed, for the log."""

    segments_removed: int = 0
    summaries_removed: int = 0
    turns_pending: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class RowSettler:
    """Brings every user's rows back to a consistent state (see the module docstring)."""

    def __init__(self, lance: LanceTables, writer: CommitWriter, turns: TurnLog) -> None:
        self._lance = lance
        self._writer = writer
        self._turns = turns

    def settle(
        self, *, summaries_lost: bool = False, users: Sequence[str] | None = None
    ) -> RowRepair:
        """`summaries_lost` (after `hymem repair` restored an older summaries table): a segment
        left with no summary at all is unfinished too, so its turns are summarised again.
        `users` limits it to those (an object store's other users may have writes in flight)."""
        repair = RowRepair()
        for user in self._users() if users is None else users:
            self._settle_user(user, repair, summaries_lost)
        return repair

    def _users(self) -> list[str]:
        found: set[str] = set()
        for table in (S.TURNS, S.SEGMENTS, S.SUMMARIES):
            found.update(self._lance.query(table, None, ["user_id"]).column("user_id").to_pylist())
        return sorted(found)

    def _settle_user(self, user: str, repair: RowRepair, summaries_lost: bool) -> None:
        where = F.eq("user_id", user)
        turns = self._lance.rows(S.TURNS, where, ["id", "status", "segment_id"])
        segments = self._lance.rows(S.SEGMENTS, where, ["id", "turn_ids"])
        pending = {t["id"] for t in turns if t["status"] == TurnStatus.PENDING.value}
        unfinished = [s["id"] for s in segments if s["turn_ids"] and set(s["turn_ids"]) <= pending]
        if summaries_lost:
            linked = self._lance.rows(S.SUMMARIES, where, ["segment_id"])
            summarised = {r["segment_id"] for r in linked} | set(unfinished)
            unfinished += [s["id"] for s in segments if s["id"] not in summarised]
        if unfinished:
            removed = self._writer.replace_rows(user, unfinished, [])
            repair.segments_removed += len(unfinished)
            repair.summaries_removed += len(removed)
        kept = {s["id"] for s in segments} - set(unfinished)
        lost: dict[str, str | None] = {
            t["id"]: None
            for t in turns
            if t["status"] == TurnStatus.STORED.value and t["segment_id"] not in kept
        }
        if lost:
            self._turns.set_status(user, lost, TurnStatus.PENDING)
            repair.turns_pending += len(lost)
        summaries = self._lance.rows(S.SUMMARIES, where, ["id", "segment_id"])
        orphans = [s["id"] for s in summaries if s["segment_id"] not in kept]
        if orphans:
            self._writer.delete_summaries(user, orphans)
            repair.summaries_removed += len(orphans)


__all__ = ["RowRepair", "RowSettler", "well_formed"]
