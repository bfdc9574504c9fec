"""What sleep-time consolidation asks of a store: summaries read, versions written (its
journal is a `LineLog`, handed to `SleepJournal` apart)."""

from __future__ import annotations

from typing import Protocol

from hymem.indexes.ports import Commits, DenseSearch, Records


class SleepStore(Records, DenseSearch, Commits, Protocol):
    """Summaries and segments in, new versions out (compare-and-swap under the guard); the
    fact pass merges through write-time consolidation, which finds neighbours (dense)."""


__all__ = ["SleepStore"]
