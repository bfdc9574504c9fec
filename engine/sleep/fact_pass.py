"""Sleep's fact pass: what write-time consolidation could not do, done before the model pass.

Write-time consolidation (`hymem.write.consolidate`) keeps one active summary per fact as
summaries are written. Three things can still leave a user's facts untidy, and sleep repairs
them first, model-free, for every user it visits:

* summaries written before fact keys (an upgraded store) or by a flush whose consolidation
  failed have no key: their facts are read and their keys stored (`StatusChange.fact_key`);
* two active summaries of one fact in one scope (a crash between a flush and its
  consolidation, or keys just filled): the same decision as at write time is taken over each
  such group, when no model is configured (a model decides them in sleep's own pass); the
  same fact held under other metadata (another agent, run or store key) is not a duplicate;
* an active summary already ended (`valid_to` set, or pointing at a newer version) is an
  inconsistent state a half-applied change leaves: it is retired.

The audit (`hymem.manage.audit`) reports the same conditions; this pass is what repairs them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime

from hymem.core.metadata import canonical
from hymem.core.types import StatusChange, SummaryStatus
from hymem.facts import fact_key
from hymem.sleep.ports import SleepStore
from hymem.write.consolidate import WriteConsolidation
from hymem.write.consolidation_plan import Consolidated
from pydantic import BaseModel


class FactPassReport(BaseModel):
    """Counts of one user's fact pass (summed into `SleepReport`)."""

    keyed: int = 0  # summaries whose fact key was read and stored
    merged: int = 0  # duplicates of one fact merged into one memory
    superseded: int = 0  # older values ended by a newer value of the same fact
    retired: int = 0  # active summaries that were already ended


def fact_pass(
    store: SleepStore,
    user_id: str,
    clock: Callable[[], datetime],
    *,
    decide_facts: bool = True,
    dry_run: bool = False,
) -> FactPassReport:
    """Keys filled and ended rows retired always; the groups of one fact decided only when
    `decide_facts` (the extractive backend: with a model, sleep's model pass decides them)."""
    report = FactPassReport()
    active = store.get_summaries(user_id)
    changes: list[StatusChange] = []
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)  # (scope, fact) -> ids
    for rec in active:
        if rec.valid_to is not None or rec.superseded_by is not None:
            changes.append(
                StatusChange(
                    summary_id=rec.id,
                    status=SummaryStatus.SUPERSEDED,
                    superseded_by=rec.superseded_by,
                    reason="already ended: retired by sleep",
                    valid_to=rec.valid_to,
                )
            )
            report.retired += 1
            continue
        key = rec.fact_key
        if key is None and (key := fact_key(rec.text)) is not None:
            changes.append(
                StatusChange(summary_id=rec.id, status=SummaryStatus.ACTIVE, fact_key=key)
            )
            report.keyed += 1
        if key is not None:  # one fact in two scopes is two memories (`same_scope`)
            groups[(canonical(rec.metadata), key)].append(rec.id)
    if dry_run:
        return report
    if changes:
        store.apply_summary_changes(user_id, [], changes)
    crowded = [i for ids in groups.values() if len(ids) > 1 for i in ids] if decide_facts else []
    if crowded:
        done: Consolidated = WriteConsolidation(store, clock).run(user_id, crowded)
        report.merged = len(done.merged)
        report.superseded = len(done.superseded) + len(done.stale)
    return report


__all__ = ["FactPassReport", "fact_pass"]
