"""What the write path hands between its steps: a buffer's prepared turns and its summariser
output waiting for the commit (`Ingestor`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hymem.core.types import SegmentRecord, SummaryRecord
from hymem.write.summary_vectors import SummarySource


@dataclass
class Summarised:
    """One buffer's summariser output, waiting to be committed with its neighbours."""

    segments: list[SegmentRecord]
    summaries: list[SummaryRecord]
    core_ids: list[str]
    sources: dict[str, SummarySource]  # summary id -> the turn sentence it was taken from


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


def commit_attributes(parts: list[Summarised]) -> dict[str, str | int]:
    """The attributes of the span of a commit of `parts`, in the database conventions' names."""
    return {
        "db.system.name": "lancedb",
        "db.operation.name": "commit",
        "hymem.segments": sum(len(p.segments) for p in parts),
        "hymem.summaries": sum(len(p.summaries) for p in parts),
        "hymem.turns": sum(len(p.core_ids) for p in parts),
    }


__all__ = ["Prepared", "Summarised", "commit_attributes"]
