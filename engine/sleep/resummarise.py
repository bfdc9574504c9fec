"""Sleep's re-summarise pass: the buffers a failing model summariser left to the extractive
one get the model's summaries once the model answers again.

When the model summariser fails on a buffer, the write path stores the extractive summaries in
its place (origin "fallback", `AddResult.summarise_fallbacks`), so nothing said is lost or kept
unsearchable. That is a stand-in, not the final state: each sleep with a model asks it again,
a few segments per call and a bounded number per sleep, and where the model writes facts for a
segment its summaries replace the segment's fallback ones in one atomic change (the fallback
versions superseded, never deleted). A segment the model still fails on, or for which it writes
no fact at all, keeps its fallback summaries for the next sleep: a weak reply never costs a
stored fact. A user's edit of a fallback summary in between makes the change a version
conflict, and that segment waits too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hymem.core.errors import LLMError, VersionConflictError
from hymem.core.logging import get_logger
from hymem.core.types import RoleUsage, StatusChange, SummaryRecord, SummaryStatus
from hymem.facts import fact_key
from hymem.llm.roles import Roles, SegmentInput
from hymem.sleep.ports import SleepStore
from hymem.write.grounding import ground
from hymem.write.records import build_summaries, summary_id
from pydantic import BaseModel

log = get_logger("hymem.sleep.resummarise")

# Segments asked about per model call: the write path's buffers hold a few segments each.
SEGMENTS_PER_CALL = 4
# Segments one sleep re-summarises per user: a long outage leaves many, and a sleep must end.
MAX_SEGMENTS_PER_SLEEP = 64

Embed = Callable[[list[str]], np.ndarray]


class ResummariseReport(BaseModel):
    """Counts of one sleep's re-summarise pass (summed over users into `SleepReport`)."""

    waiting: int = 0  # segments whose summaries are fallbacks, before this sleep
    asked: int = 0  # of those, segments the model was asked about
    replaced: int = 0  # segments whose fallback summaries the model's now replace
    written: int = 0  # model summaries written
    retired: int = 0  # fallback summaries superseded
    kept: int = 0  # segments left as they were: model failure, no facts, or a conflict
    usage: RoleUsage = RoleUsage()


def resummarise_pass(
    store: SleepStore,
    roles: Roles,
    embed: Embed,
    user_id: str,
    *,
    dry_run: bool = False,
    limit: int = MAX_SEGMENTS_PER_SLEEP,
) -> ResummariseReport:
    """Replace one user's fallback summaries by the model's, segment by segment (see module)."""
    report = ResummariseReport()
    waiting: dict[str, list[SummaryRecord]] = {}
    for rec in store.get_summaries(user_id):
        if rec.origin == "fallback":
            waiting.setdefault(rec.segment_id, []).append(rec)
    report.waiting = len(waiting)
    if not waiting or roles.label == "extractive" or dry_run:
        return report
    order = sorted(waiting, key=lambda sid: min(_when(r) for r in waiting[sid]))[:limit]
    segments = {s.id: s for s in store.get_segments(user_id, order)}
    todo = [segments[sid] for sid in order if sid in segments]
    report.kept += len(order) - len(todo)  # a segment lost and not yet repaired
    for start in range(0, len(todo), SEGMENTS_PER_CALL):
        batch = todo[start : start + SEGMENTS_PER_CALL]
        report.asked += len(batch)
        inputs = [
            SegmentInput(segment_id=s.id, lines=s.text.split("\n"), session_time=s.time_start)
            for s in batch
        ]
        try:
            result = roles.summarise(inputs)
        except LLMError as exc:
            log.warning("sleep.resummarise_failed", user_id=user_id, error=str(exc))
            report.kept += len(batch)
            continue
        report.usage = report.usage + result.usage
        if result.fallback:
            report.kept += len(batch)
            continue
        # facts from outside their segment are dropped, as on the write path
        grounded = ground(inputs, result.output).output
        made = build_summaries(user_id, batch, grounded.segments)
        for seg in batch:
            own = _renamed([r for r in made if r.segment_id == seg.id])
            if not own:  # no (grounded) fact at all: the fallback's are all there is
                report.kept += 1
                continue
            if _replace(store, embed, user_id, own, waiting[seg.id]):
                report.replaced += 1
                report.written += len(own)
                report.retired += len(waiting[seg.id])
            else:
                report.kept += 1
    log.info("sleep.resummarised", user_id=user_id, **report.model_dump(exclude={"usage"}))
    return report


def _when(rec: SummaryRecord) -> str:
    moment = rec.time_start or rec.created_at
    return moment.isoformat() if moment is not None else ""


def _renamed(records: Sequence[SummaryRecord]) -> list[SummaryRecord]:
    """The model's summaries under ids of their own: the write path named the fallback ones
    after the same segment and index, and both stay in the store (the fallback's superseded)."""
    out = []
    for index, rec in enumerate(records):
        new_id = summary_id(f"{rec.segment_id}:resummarised", index)
        out.append(
            rec.model_copy(
                update={"id": new_id, "memory_id": new_id, "fact_key": fact_key(rec.text)}
            )
        )
    return out


def _replace(
    store: SleepStore,
    embed: Embed,
    user_id: str,
    new: list[SummaryRecord],
    fallbacks: list[SummaryRecord],
) -> bool:
    """One atomic change: the model's summaries in, the segment's fallback ones superseded
    (compared and swapped: a fallback edited meanwhile makes it a conflict, and False)."""
    vectors = np.asarray(embed([r.text for r in new]))
    new = [
        r.model_copy(update={"vector": [float(x) for x in v]})
        for r, v in zip(new, vectors, strict=True)
    ]
    changes = [
        StatusChange(
            summary_id=old.id,
            status=SummaryStatus.SUPERSEDED,
            superseded_by=new[0].id,
            reason="re-summarised by the model after a summariser failure",
        )
        for old in fallbacks
    ]
    try:
        store.apply_summary_changes(user_id, new, changes, expect=fallbacks)
    except VersionConflictError:
        log.info("sleep.resummarise_conflict", user_id=user_id, segment_id=new[0].segment_id)
        return False
    return True


__all__ = ["MAX_SEGMENTS_PER_SLEEP", "SEGMENTS_PER_CALL", "ResummariseReport", "resummarise_pass"]
