"""The parts of a persistent `Store`, and the one wiring both kinds of store share.

A folder (`folder/open.py`) and an object store (`objects/open.py`) differ in where the tables,
journals and lexical index live and in who may write; each opener builds those few parts of its
kind and hands them to `assemble`, which wires the collaborators every store has the same way
(turn log, dense rows, record reader, traces, compactor, commit writer, eraser, recovery).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hymem.indexes.dense.cache import DenseCache
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.trace_table import TraceTable
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.lexical.feed import LexicalFeed
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.ports import LineLog
from hymem.indexes.store.access import WriteAccess
from hymem.indexes.store.commits import CommitWriter
from hymem.indexes.store.erasure import Eraser
from hymem.indexes.store.journals import Journals
from hymem.indexes.store.maintenance import Compactor
from hymem.indexes.store.records import RecordReader
from hymem.indexes.store.recovery import Recovery


@dataclass(frozen=True)
class KindParts:
    """What an opener builds for its kind of store."""

    path: Path | str  # a folder, or the object-store URI
    read_only: bool
    dim: int
    meta: dict[str, Any]
    lance: LanceTables
    lex: LexicalIndex
    feed: LexicalFeed
    journals: Journals
    access: WriteAccess
    sleep_log: LineLog
    dense_cache: DenseCache
    write_lock: threading.RLock
    maintenance_folder: Path  # where the compactor keeps its index-training state
    # No other process writes these tables (a folder's writer lock): only then may an erasure
    # delete files no version references yet, which another writer's commit may be writing.
    sole_writer: bool = False


@dataclass(frozen=True)
class Maintenance:
    """How the compactor runs for a kind: background thread, compaction inside writes, and
    whether a table's ANN index is worth building (a folder: only when a search reads it)."""

    vector_index_min_rows: int
    background: bool
    automatic: bool
    needs_ann: Callable[[DenseRows], Callable[[str], bool]]


@dataclass(frozen=True)
class StoreParts:
    """Every collaborator of an open `Store`."""

    kind: KindParts
    turns: TurnLog
    dense: DenseRows
    records: RecordReader
    traces: TraceTable
    compactor: Compactor
    commits: CommitWriter
    eraser: Eraser
    recovery: Recovery


def assemble(kind: KindParts, maintenance: Maintenance, *, dense_read_only: bool) -> StoreParts:
    """Wire the shared collaborators over a kind's parts. Nothing is repaired here: the opener
    runs `recovery.repair_on_open` once the parts exist (and closes them if it fails)."""
    lance = kind.lance
    turns = TurnLog(lance)
    dense = DenseRows(lance, kind.dense_cache, kind.dim, read_only=dense_read_only)
    records = RecordReader(lance, kind.lex, dense, kind.dim, read_only=dense_read_only)
    compactor = Compactor(
        lance,
        kind.feed,
        maintenance.vector_index_min_rows,
        folder=kind.maintenance_folder,
        write_lock=kind.write_lock,
        background=maintenance.background,
        needs_ann=maintenance.needs_ann(dense),
        automatic=maintenance.automatic,
    )
    dense.on_oversized = compactor.wake
    commits = CommitWriter(lance, kind.lex, turns, kind.journals, kind.feed, compactor, kind.dim)
    eraser = Eraser(lance, kind.feed, kind.journals, kind.sleep_log, sole_writer=kind.sole_writer)
    recovery = Recovery(kind.path, kind.journals, kind.feed, commits, turns, lance, eraser)
    return StoreParts(
        kind=kind,
        turns=turns,
        dense=dense,
        records=records,
        traces=TraceTable(lance),
        compactor=compactor,
        commits=commits,
        eraser=eraser,
        recovery=recovery,
    )


__all__ = ["KindParts", "Maintenance", "StoreParts", "assemble"]
