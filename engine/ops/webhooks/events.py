"""Which events a finished public call makes: pure functions from a `CallRecord` to `Event`s.

Only successful calls that changed something make events: an add that left every turn pending,
a dry-run sleep or one that changed nothing, an update to the same text, all make none. An
event carries ids and counts, never the text of a memory: a receiver that wants the text asks
the memory for it (with its own credentials), and the outbox on disk holds no user's words.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hymem.backfill.runner import BackfillReport
from hymem.core.time import utcnow
from hymem.core.types import AddResult, SummaryRecord
from hymem.core.webhook_endpoint import (
    IMPORT_FINISHED,
    SUMMARIES_CHANGED,
    TURNS_COMMITTED,
    USER_ERASED,
)
from hymem.imports.chat_import import ChatImportReport
from hymem.manage.erase import ErasureReport
from hymem.manage.portable import ImportReport
from hymem.ops.calls import CallRecord
from hymem.sleep.consolidator import SleepReport

_SLACK = timedelta(milliseconds=5)  # a doubt counts as new: a repeated event, never a lost one


@dataclass(frozen=True)
class Event:
    """One event as every endpoint receives it; `id` is the idempotency key (`webhook-id`)."""

    type: str
    user_id: str | None
    data: dict[str, Any]
    id: str = field(default_factory=lambda: f"evt_{uuid.uuid4().hex}")
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def body(self) -> str:
        """The JSON body, fixed once: it is stored and signed as this exact text."""
        payload = {
            "id": self.id,
            "type": self.type,
            "created_at": self.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "user_id": self.user_id,
            "data": self.data,
        }
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def _committed(call: CallRecord) -> list[Event]:
    result = call.result
    if not isinstance(result, AddResult) or not result.segments_written:
        return []
    data: dict[str, Any] = {
        "call": call.name,
        "segment_ids": list(result.segments_written),
        "summary_ids": list(result.summaries_written),
        "merged": list(result.merged),
        "superseded": list(result.superseded),
        "pending": result.pending,
        "counts": {
            "segments": len(result.segments_written),
            "summaries": len(result.summaries_written),
        },
    }
    if call.name == "add":
        data["session_id"] = (call.kwargs or {}).get("session_id", "default")
        data["turn_ids"] = list(result.new_turn_ids)
    return [Event(TURNS_COMMITTED, call.user_id, data)]


def sleep_changes(report: SleepReport) -> int:
    """Summary rows a sleep rewrote: versions, retirements, merges and repairs (fact keys it
    only filled in change no memory's meaning and do not count)."""
    facts = report.facts
    return (
        report.new_versions
        + report.superseded
        + report.deleted
        + report.repaired
        + facts.merged
        + facts.superseded
        + facts.retired
    )


def _slept(call: CallRecord) -> list[Event]:
    """One event per sleep: the report sums its users' changes (it has no per-user detail),
    so `users` lists every user the sleep looked at."""
    report = call.result
    if not isinstance(report, SleepReport) or report.dry_run or not sleep_changes(report):
        return []
    data = {
        "by": "sleep",
        "users": list(report.users),
        "new_versions": report.new_versions,
        "superseded": report.superseded,
        "deleted": report.deleted,
        "repaired": report.repaired,
        "deferred": report.deferred,
        "facts": report.facts.model_dump(),
    }
    return [Event(SUMMARIES_CHANGED, call.user_id, data)]


def _edited(call: CallRecord) -> list[Event]:
    """update / delete / restore. An update to the same text or a second delete returns the
    existing version unchanged: no event (a version made by this call is newer than its start)."""
    record = call.result
    if not isinstance(record, SummaryRecord):
        return []
    started = utcnow() - timedelta(seconds=call.seconds) - _SLACK
    if call.name != "restore" and record.created_at < started:
        return []
    data = {
        "by": "user",
        "action": call.name,
        "memory_id": record.memory_id,
        "summary_id": record.id,
        "previous_id": record.previous_id,
        "status": str(record.status),
        "version": record.version,
    }
    return [Event(SUMMARIES_CHANGED, record.user_id, data)]


def _erased(call: CallRecord) -> list[Event]:
    report = call.result
    if not isinstance(report, ErasureReport):
        return []
    return [Event(USER_ERASED, report.user_id, report.model_dump(exclude={"user_id"}))]


def _imported(call: CallRecord) -> list[Event]:
    report = call.result
    if isinstance(report, ImportReport):
        data = {"kind": "records", **report.model_dump(exclude={"user_id"})}
        return [Event(IMPORT_FINISHED, report.user_id, data)]
    if isinstance(report, ChatImportReport):
        data = {"kind": "chat", **report.model_dump(exclude={"user_id"})}
        return [Event(IMPORT_FINISHED, report.user_id, data)]
    if isinstance(report, BackfillReport):
        data = {
            "kind": "backfill",
            "users": report.users,
            "turns": report.turns,
            "written_turns": report.written_turns,
            "segments": report.segments,
            "summaries": report.summaries,
            "pending": report.pending,
            "skipped_users": len(report.skipped),
            "failed_users": sorted(report.failed),
        }
        return [Event(IMPORT_FINISHED, None, data)]
    return []


BUILDERS: dict[str, Callable[[CallRecord], list[Event]]] = {
    "add": _committed,
    "flush": _committed,
    "sleep": _slept,
    "update": _edited,
    "delete": _edited,
    "restore": _edited,
    "erase_user": _erased,
    "import_records": _imported,
    "import_chat": _imported,
    "backfill": _imported,
}


def events_of(call: CallRecord) -> list[Event]:
    """The events one finished call makes (none for a failed call or a read)."""
    if call.error is not None:
        return []
    build = BUILDERS.get(call.name)
    return build(call) if build is not None else []


__all__ = ["BUILDERS", "Event", "events_of", "sleep_changes"]
