"""Turning update decisions into versioned changes (pure: no disk, no models).

A decision is about one target summary, given its queue of newer similar summaries:

* `update`  -> a new active version (origin "consolidated", same segment link, version + 1,
               previous_id = target) and the target marked superseded with superseded_by;
* `delete`  -> the target marked deleted with a reason and the newer evidence id;
* `ignore`  -> nothing.

Nothing is ever hard-deleted and Level-2 text is never touched. The decisions come checked
(`hymem.write.decisions`, which consolidation at write time shares): a merge that drops a
content word only the older version held is already an ignore, counted as `rejected`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from hymem.core.types import Attribution, StatusChange, SummaryRecord, SummaryStatus
from hymem.facts import fact_key
from hymem.indexes.keys import merged_context
from hymem.write.decisions import Decision, version_id
from pydantic import BaseModel

# When several decisions name the same target in one sleep, the one that keeps most information
# wins: a merge keeps the old facts and adds new ones, an ignore keeps them, a delete hides them.
_PRECEDENCE: dict[str, int] = {"update": 0, "ignore": 1, "delete": 2}


class PlannedChange(BaseModel):
    """One change a sleep applies (or would apply, on a dry run)."""

    user_id: str
    action: Literal["update", "delete"]
    target_id: str
    new_id: str | None = None
    text: str | None = None
    evidence_id: str | None = None
    reason: str | None = None


@dataclass
class Plan:
    """Everything one user's sleep writes: new versions first, then the status changes."""

    new: list[SummaryRecord]
    changes: list[StatusChange]
    planned: list[PlannedChange]

    def retire(
        self, user_id: str, d: Decision, status: SummaryStatus, *, new_id: str | None = None
    ) -> None:
        """The target's status change (deleted, or superseded by `new_id`) and the planned
        change that reports it."""
        merged = status == SummaryStatus.SUPERSEDED
        self.changes.append(
            StatusChange(
                summary_id=d.target_id,
                status=status,
                superseded_by=new_id,
                reason=(d.reason or "consolidated") if merged else d.reason,
                evidence_id=d.evidence_id,
            )
        )
        self.planned.append(
            PlannedChange(
                user_id=user_id,
                action="update" if merged else "delete",
                target_id=d.target_id,
                new_id=new_id,
                text=d.text if merged else None,
                evidence_id=d.evidence_id,
                reason=d.reason,
            )
        )


def resolve_conflicts(decisions: Iterable[Decision]) -> list[Decision]:
    """At most one decision per target, chosen deterministically (see _PRECEDENCE), ordered by
    target id so the plan does not depend on which worker finished first."""
    best: dict[str, Decision] = {}
    for d in decisions:
        cur = best.get(d.target_id)
        if cur is None or _rank(d) < _rank(cur):
            best[d.target_id] = d
    return [best[k] for k in sorted(best)]


def _rank(d: Decision) -> tuple[int, str, str, str]:
    return (_PRECEDENCE[d.action], d.text or "", d.evidence_id or "", d.reason or "")


# --- versions -----------------------------------------------------------------------------


def plan_changes(
    user_id: str,
    decisions: Sequence[Decision],
    records: Mapping[str, SummaryRecord],
    *,
    now: datetime,
) -> Plan:
    """Versions and status changes for `decisions` (already conflict-resolved).

    `records` holds every summary of the user in any status (for targets, evidence and version
    numbers). Targets that are no longer active are skipped. A new version's id that already
    exists (a replay after a crash between insert and retire) is not inserted again; the target
    is just retired, which completes the interrupted apply.
    """
    plan = Plan(new=[], changes=[], planned=[])
    for d in resolve_conflicts(decisions):
        target = records.get(d.target_id)
        if target is None or target.status != SummaryStatus.ACTIVE or d.action == "ignore":
            continue
        if d.action == "delete":
            plan.retire(user_id, d, SummaryStatus.DELETED)
        else:
            _plan_update(plan, user_id, target, d, records, now)
    return plan


def _plan_update(
    plan: Plan,
    user_id: str,
    target: SummaryRecord,
    d: Decision,
    records: Mapping[str, SummaryRecord],
    now: datetime,
) -> None:
    """A new version and the target superseded by it. The version is not inserted again when
    a replay finds it already stored, and nothing is planned when restore() undid this very
    merge (its version is then stored but no longer active)."""
    assert d.text is not None
    versions = lineage(target.id, records)
    existing = next((r for r in versions if r.previous_id == target.id and r.text == d.text), None)
    if existing is not None and existing.status != SummaryStatus.ACTIVE:
        return
    if existing is None:
        version = max(r.version for r in versions) + 1
        nid = version_id(target.id, version, d.text)
        plan.new.append(_new_version(target, d, nid, version, records, now))
    else:
        nid = existing.id
    plan.retire(user_id, d, SummaryStatus.SUPERSEDED, new_id=nid)


def _new_version(
    target: SummaryRecord,
    d: Decision,
    nid: str,
    version: int,
    records: Mapping[str, SummaryRecord],
    now: datetime,
) -> SummaryRecord:
    evidence = records.get(d.evidence_id) if d.evidence_id else None
    ends = [t for t in (target.time_end, evidence.time_end if evidence else None) if t]
    inputs = [target] if evidence is None else [target, evidence]
    return SummaryRecord(
        id=nid,
        user_id=target.user_id,
        segment_id=target.segment_id,
        text=d.text or "",
        vector=None,
        time_start=target.time_start,
        time_end=max(ends) if ends else target.time_end,
        topic=target.topic,
        source_turn_ids=list(dict.fromkeys(t for r in inputs for t in r.source_turn_ids)),
        attribution=merged_attribution(inputs),
        context=merged_context([r.context for r in inputs]),
        status=SummaryStatus.ACTIVE,
        version=version,
        previous_id=target.id,
        reason=d.reason,
        evidence_id=d.evidence_id,
        origin="consolidated",
        created_at=now,
        updated_at=now,
        metadata=dict(target.metadata),  # queues never mix metadata: the evidence's too
        memory_id=target.memory_id,  # a rewrite is a version of the same memory
        valid_from=target.valid_from,
        fact_key=fact_key(d.text or ""),  # a rewrite may state the fact differently
    )


def merged_attribution(inputs: Sequence[SummaryRecord]) -> Attribution:
    """A merge is as well attributed as its least attributed input."""
    order = [Attribution.SOURCE, Attribution.MODEL, Attribution.SEGMENT]
    return max((Attribution(r.attribution) for r in inputs), key=order.index)


# --- lineage, history and restore ---------------------------------------------------------


def lineage(summary_id: str, records: Mapping[str, SummaryRecord]) -> list[SummaryRecord]:
    """Every version connected to `summary_id` by previous_id / superseded_by links, oldest
    first (by version, then creation)."""
    if summary_id not in records:
        return []
    nexts: dict[str, list[str]] = {}
    for r in records.values():
        if r.previous_id:
            nexts.setdefault(r.previous_id, []).append(r.id)
    seen: set[str] = set()
    todo = [summary_id]
    while todo:
        rid = todo.pop()
        if rid in seen or rid not in records:
            continue
        seen.add(rid)
        rec = records[rid]
        todo.extend(x for x in (rec.previous_id, rec.superseded_by) if x)
        todo.extend(nexts.get(rid, []))
    return sorted((records[i] for i in seen), key=lambda r: (r.version, r.created_at, r.id))


def root_of(summary_id: str, records: Mapping[str, SummaryRecord]) -> SummaryRecord:
    """The first version of a summary's chain (following previous_id)."""
    rec = records[summary_id]
    seen = {rec.id}
    while rec.previous_id and rec.previous_id in records and rec.previous_id not in seen:
        rec = records[rec.previous_id]
        seen.add(rec.id)
    return rec


def ancestors(summary_id: str, records: Mapping[str, SummaryRecord]) -> list[str]:
    """The summary and the versions it descends from, newest first."""
    out = [summary_id]
    rec = records.get(summary_id)
    while rec is not None and rec.previous_id and rec.previous_id not in out:
        out.append(rec.previous_id)
        rec = records.get(rec.previous_id)
    return out


def plan_restore(
    summary_id: str, records: Mapping[str, SummaryRecord]
) -> tuple[StatusChange, StatusChange | None]:
    """Reactivate `summary_id` and retire the active version that replaced it (if any).

    Returned in apply order: reactivate first, then retire, so readers always see one of them.
    Raises KeyError for an unknown id and ValueError for a summary that is already active.
    """
    target = records[summary_id]
    if target.status == SummaryStatus.ACTIVE:
        raise ValueError(f"summary {summary_id!r} is already active")
    head: SummaryRecord | None = None
    cur, seen = target, {target.id}
    while cur.superseded_by and cur.superseded_by in records and cur.superseded_by not in seen:
        cur = records[cur.superseded_by]
        seen.add(cur.id)
        if cur.status == SummaryStatus.ACTIVE:
            head = cur
            break
    reactivate = StatusChange(
        summary_id=target.id,
        status=SummaryStatus.ACTIVE,
        superseded_by=None,
        reason=None,
        evidence_id=None,
    )
    retire = None
    if head is not None:
        retire = StatusChange(
            summary_id=head.id,
            status=SummaryStatus.SUPERSEDED,
            superseded_by=target.id,
            reason=f"restored {target.id}",
        )
    return reactivate, retire


def with_vectors(
    records: Sequence[SummaryRecord], vectors: Sequence[Sequence[float]]
) -> list[SummaryRecord]:
    """Attach embeddings to freshly planned versions."""
    return [
        r.model_copy(update={"vector": [float(x) for x in v]})
        for r, v in zip(records, vectors, strict=True)
    ]
