"""Replaying a past ask: what it read, as it was, beside what the same question reads today.

A trace keeps ids, not text. Summaries are versioned rows that are never rewritten in place
(an update, a sleep or a delete writes a new version and retires the old one), and Level-2
segments are never rewritten either, so reading the traced ids with every status gives back
exactly the records that ask read, even when they have been replaced or deleted since. Only
erasure removes rows: an erased record is reported as `missing`, never guessed.

The question is then asked again with the same depth, sizes, filter and `as_of`, against the
store as it is now; the new ask writes its own trace like any other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, Literal

from hymem.core.errors import NotFoundError
from hymem.core.time import UtcDatetime
from hymem.core.types import SummaryRecord, SummaryStatus
from hymem.read.params import AskParams, ask_params
from hymem.read.ports import ReplayStore
from hymem.read.trace_record import Trace, traces_from_rows
from pydantic import BaseModel, Field

RecordState = Literal["active", "superseded", "deleted", "missing"]
_STATES: dict[SummaryStatus, RecordState] = {
    SummaryStatus.ACTIVE: "active",
    SummaryStatus.SUPERSEDED: "superseded",
    SummaryStatus.DELETED: "deleted",
}


class ReadRecord(BaseModel):
    """One record an ask read: its text as read, and what has become of it since."""

    id: str
    level: Literal["summary", "segment"]
    text: str | None  # None when the record has been erased since
    status_now: RecordState
    superseded_by: str | None = None
    time_start: UtcDatetime | None = None


class ReplaySide(BaseModel):
    """One ask, then or now: its answer, its path, and the records it read."""

    trace_id: str
    answer: str
    path: str | None
    escalated: bool
    complete: bool
    summaries: list[ReadRecord] = Field(default_factory=list)
    segments: list[ReadRecord] = Field(default_factory=list)

    @property
    def read_ids(self) -> list[str]:
        return [r.id for r in (*self.summaries, *self.segments)]


class Replay(BaseModel):
    """`Memory.replay`'s result: a past ask (`then`) beside the same question today (`now`)."""

    question: str
    user_id: str
    asked_at: UtcDatetime
    as_of: UtcDatetime | None
    then: ReplaySide
    now: ReplaySide

    @property
    def same_answer(self) -> bool:
        return self.then.answer.strip() == self.now.answer.strip()

    @property
    def no_longer_read(self) -> list[str]:
        now = set(self.now.read_ids)
        return [i for i in self.then.read_ids if i not in now]

    @property
    def newly_read(self) -> list[str]:
        then = set(self.then.read_ids)
        return [i for i in self.now.read_ids if i not in then]


def find_trace(store: ReplayStore, trace_id: str, user_id: str) -> Trace:
    rows = store.read_traces(user_id=user_id, trace_id=trace_id)
    traces = traces_from_rows(rows)
    if not traces:
        raise NotFoundError("trace", trace_id)
    return traces[0]


def read_ids(trace: Trace) -> tuple[list[str], list[str]]:
    """The summaries and segments an ask put before a model, every round, in first-read order:
    each round's light context and the summaries its selection chose, and the segments its deep
    answer read. Traces written before rounds were recorded give their evidence instead."""
    summaries: list[str] = []
    segments: list[str] = []
    for r in trace.rounds:
        summaries += [*r.summary_ids, *r.selected_ids]
        segments += r.segment_ids
    if not trace.rounds:
        summaries, segments = list(trace.summary_ids), list(trace.segment_ids)
    return list(dict.fromkeys(summaries)), list(dict.fromkeys(segments))


def side(store: ReplayStore, trace: Trace) -> ReplaySide:
    """A trace's side of the replay: its records read back by id, whatever their status."""
    summary_ids, segment_ids = read_ids(trace)
    found = {s.id: s for s in store.get_summaries(trace.user_id, ids=summary_ids, statuses=None)}
    segments = {s.id: s for s in store.get_segments(trace.user_id, segment_ids)}
    return ReplaySide(
        trace_id=trace.trace_id,
        answer=trace.answer,
        path=trace.path,
        escalated=trace.escalated,
        complete=trace.complete,
        summaries=[_summary(i, found.get(i)) for i in summary_ids],
        segments=[
            ReadRecord(
                id=i,
                level="segment",
                text=seg.text if seg else None,
                status_now="active" if seg else "missing",
                time_start=seg.time_start if seg else None,
            )
            for i, seg in ((i, segments.get(i)) for i in segment_ids)
        ],
    )


def _summary(summary_id: str, row: SummaryRecord | None) -> ReadRecord:
    if row is None:
        return ReadRecord(id=summary_id, level="summary", text=None, status_now="missing")
    return ReadRecord(
        id=summary_id,
        level="summary",
        text=row.text,
        status_now=_STATES[row.status],
        superseded_by=row.superseded_by,
        time_start=row.time_start,
    )


def replay_params(trace: Trace, config: Any) -> AskParams:
    """The past ask's parameters: its recorded plan (depth, k, N, d, T, light tokens), filter
    and `as_of`; a trace from before plans were recorded gets the config's sizes."""
    plan = trace.plan
    if plan is None:
        return ask_params(
            trace.question,
            user_id=trace.user_id,
            config=config,
            depth=trace.depth,
            as_of=trace.as_of,
            filters=trace.filters,
        )
    checked = ask_params(  # the same checks as a live ask, on the recorded values
        trace.question,
        user_id=trace.user_id,
        config=config,
        depth=plan.get("depth", trace.depth),
        k=plan.get("k"),
        N=plan.get("n_deep"),
        d=plan.get("batch"),
        max_iterations=plan.get("max_iterations"),
        as_of=trace.as_of,
        filters=trace.filters,
    )
    light = plan.get("light_tokens", 0)
    tokens = light if isinstance(light, int) and light >= 0 else 0
    return dataclasses.replace(checked, plan=dataclasses.replace(checked.plan, light_tokens=tokens))


def changed_since(records: Iterable[ReadRecord]) -> list[ReadRecord]:
    """Records no longer active: replaced, deleted or erased since they were read."""
    return [r for r in records if r.status_now != "active"]


__all__ = [
    "ReadRecord",
    "Replay",
    "ReplaySide",
    "changed_since",
    "find_trace",
    "read_ids",
    "replay_params",
    "side",
]
