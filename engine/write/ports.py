"""What the write path asks of a store: the ports it is built with, and nothing else."""

from __future__ import annotations

from typing import Protocol

from hymem.indexes.ports import Commits, DenseSearch, Records, Turns


class ConsolidationStore(Records, DenseSearch, Commits, Protocol):
    """Write-time consolidation: a flush's neighbours (dense), their rows and versions
    (records), and the commit that lands the merge with the flush."""


class WriteStore(Turns, Records, DenseSearch, Commits, Protocol):
    """The whole write path: turns appended and read back, then consolidated and committed."""


__all__ = ["ConsolidationStore", "WriteStore"]
