"""What the management API returns: one memory with its links, and a page of records."""

from __future__ import annotations

from typing import Literal

from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord
from pydantic import BaseModel, Field

RecordLevel = Literal["summary", "segment", "turn"]
StatusFilter = Literal["active", "superseded", "deleted", "pending", "stored", "all"]


class MemoryItem(BaseModel):
    """One Level-1 memory as `get()` returns it: the summary (without its vector), every
    version of its chain oldest first, the turns it rests on and the raw segment it came from
    (None only if that segment was lost and not yet repaired). `segments` is every segment
    holding one of those turns, that one first: a memory that merged a repeat said in another
    segment rests on turns of both, and leads to the raw text of each."""

    summary: SummaryRecord
    version_ids: list[str] = Field(default_factory=list)
    source_turns: list[TurnRecord] = Field(default_factory=list)
    segment: SegmentRecord | None = None
    segments: list[SegmentRecord] = Field(default_factory=list)


class Page(BaseModel):
    """One page of `get_all()`: records in a stable order (turns by sequence, segments and
    summaries by creation time, then id), and the cursor of the next page (None at the end).
    The cursor is opaque: pass it back unchanged with the same level."""

    level: RecordLevel
    items: list[TurnRecord | SegmentRecord | SummaryRecord] = Field(default_factory=list)
    next_cursor: str | None = None


__all__ = ["MemoryItem", "Page", "RecordLevel", "StatusFilter"]
