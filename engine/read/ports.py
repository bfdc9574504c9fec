"""What the read path asks of a store besides search (the searcher has its own ports)."""

from __future__ import annotations

from typing import Protocol

from hymem.indexes.ports import LexicalSearch, Records, TraceLog, Turns


class SegmentStore(Turns, Records, Protocol):
    """The deep path's Level-2 reads: segments, and the turns a merged segment is cut from."""


class ReplayStore(Records, TraceLog, Protocol):
    """Answer replay: a stored trace and the records it retrieved."""


class ReadStore(Turns, Records, LexicalSearch, TraceLog, Protocol):
    """The `Reader`: segment reads, traces written and replayed, and one lexical lookup of a
    name a question calls the user by."""


__all__ = ["ReadStore", "ReplayStore", "SegmentStore"]
