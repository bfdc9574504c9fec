"""Sleep never consolidates across metadata: update queues are built within each group of
summaries that share one metadata dict (pure: no disk, no models).

Metadata scopes memories (an agent, a run, a project): a fact recorded for agent A must not be
merged into, or deleted by, a fact recorded for agent B, however similar their texts. Building
each group's queues on its own (rather than filtering one queue afterwards) keeps each queue's
full length of same-scope candidates. A merge's new version carries its target's metadata,
which is then also its evidence's. Most users hold one group, which is the old single build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from hymem.core.metadata import canonical
from hymem.core.types import SummaryRecord
from hymem.sleep.queues import QueueCost, UpdateQueues


def metadata_queues(
    actives: Sequence[SummaryRecord], build: Callable[[list[SummaryRecord]], UpdateQueues]
) -> tuple[list[list[int]], QueueCost]:
    """Each active summary's queue (indices into `actives`) built by `build` within its
    metadata group, and the summed cost of every build."""
    groups: dict[str, list[int]] = {}
    for i, rec in enumerate(actives):
        groups.setdefault(canonical(rec.metadata), []).append(i)
    if len(groups) <= 1:
        queues = build(list(actives))
        return [[j for j, _ in queues.queue(i)] for i in range(len(actives))], queues.cost
    out: list[list[int]] = [[] for _ in actives]
    cost: QueueCost | None = None
    for members in groups.values():
        queues = build([actives[i] for i in members])
        for local, i in enumerate(members):
            out[i] = [members[j] for j, _ in queues.queue(local)]
        cost = queues.cost if cost is None else _add(cost, queues.cost)
    assert cost is not None
    return out, cost


def _add(a: QueueCost, b: QueueCost) -> QueueCost:
    return replace(
        a,
        items=a.items + b.items,
        queues=a.queues + b.queues,
        entries=a.entries + b.entries,
        similarities=a.similarities + b.similarities,
        blocks=a.blocks + b.blocks,
        block_bytes=max(a.block_bytes, b.block_bytes),
        seconds=a.seconds + b.seconds,
        method="ivf" if "ivf" in (a.method, b.method) else a.method,  # any approximate scan
    )


__all__ = ["metadata_queues"]
