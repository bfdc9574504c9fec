"""What the write path hands between its steps: a buffer's prepared turns, its summariser
output waiting for the commit, what each commit and each flush did (`Flusher`), and the one
point where an add's or a flush's `AddResult` is put together from them (`add_result`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from hymem.core.types import AddResult, RoleUsage, SegmentRecord, SummaryRecord, Usage
from hymem.write.consolidation_plan import Consolidated
from hymem.write.summary_vectors import SummarySource


@dataclass
class Summarised:
    """One buffer's summariser output, waiting to be committed with its neighbours."""

    segments: list[SegmentRecord]
    summaries: list[SummaryRecord]
    core_ids: list[str]
    sources: dict[str, SummarySource]  # summary id -> the turn sentence it was taken from
    usage: RoleUsage = field(default_factory=RoleUsage)  # what its summariser call cost
    fallback: bool = False  # the extractive summariser stood in for the model
    # segments whose model facts were all ungrounded, summarised by the extractive one instead
    regrounded: list[str] = field(default_factory=list)


@dataclass
class Prepared:
    """Per pending turn: the text and line the summariser sees, its buffer tokens, and the
    turn's vector.

    Buffer tokens count what the turn says as the summariser sees it ("speaker: text", after
    compression). The line's time prefix is formatting and overlap tails are repeated context,
    so neither fills the buffer; the prompt tokens actually sent are accounted by the roles."""

    texts: list[str]
    lines: list[str]
    tokens: list[int]
    vectors: np.ndarray


@dataclass(frozen=True)
class Committed:
    """One commit of summarised buffers: the turns it stored, the segments and summaries it
    wrote, and what its consolidation changed (None: not folded in, `after_write`'s to do);
    or, with `error`, nothing (a full disk: the turns stay pending)."""

    turns: int = 0
    segment_ids: list[str] = field(default_factory=list)
    summary_ids: list[str] = field(default_factory=list)
    consolidated: Consolidated | None = None
    error: str | None = None


@dataclass(frozen=True)
class Flushed:
    """What one flush of a user's pending turns did: the turns still pending after it, the
    backend, its commits, the summariser's cost, the segments the extractive summariser
    summarised for a failed model, and the error that stopped it, if any."""

    pending: int = 0
    backend: str = ""
    commits: list[Committed] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    summarise_fallbacks: list[str] = field(default_factory=list)
    error: str | None = None


def add_result(
    flushed: Flushed,
    after: Consolidated | None = None,
    *,
    turn_ids: Sequence[str] = (),
    new_turn_ids: Sequence[str] = (),
) -> AddResult:
    """An add's (its turns accepted) or a flush's result: what its flush wrote, and what the
    consolidation folded into its commits or run after them (`after`) changed."""
    done = [c.consolidated for c in flushed.commits if c.consolidated is not None]
    done += [after] if after is not None else []
    return AddResult(
        turn_ids=list(turn_ids),
        new_turn_ids=list(new_turn_ids),
        segments_written=[i for c in flushed.commits for i in c.segment_ids],
        summaries_written=[i for c in flushed.commits for i in c.summary_ids],
        pending=flushed.pending,
        error=flushed.error,
        summarise_fallbacks=list(flushed.summarise_fallbacks),
        usage=flushed.usage,
        backend=flushed.backend,
        merged=[i for d in done for i in d.merged],
        superseded=[i for d in done for i in (*d.superseded, *d.stale)],
    )


def commit_attributes(parts: list[Summarised]) -> dict[str, str | int]:
    """The attributes of the span of a commit of `parts`, in the database conventions' names."""
    return {
        "db.system.name": "lancedb",
        "db.operation.name": "commit",
        "hymem.segments": sum(len(p.segments) for p in parts),
        "hymem.summaries": sum(len(p.summaries) for p in parts),
        "hymem.turns": sum(len(p.core_ids) for p in parts),
    }


__all__ = ["Committed", "Flushed", "Prepared", "Summarised", "add_result", "commit_attributes"]
