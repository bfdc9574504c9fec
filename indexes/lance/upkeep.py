"""Upkeep of hymem's LanceDB tables, apart from their rows: compaction (with the BTREE and
LABEL_LIST indexes it creates and the versions it prunes), the erasure's purge of deleted rows,
and IVF_PQ builds. `tables.LanceTables` moves rows in and out; these rewrite what holds them,
and are called only by the store's index maintainer (`store/maintenance.py`) and erasure
(`store/erasure.py`).
"""

from __future__ import annotations

import math
import random
import time
import warnings
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from hymem.core.logging import get_logger
from hymem.core.time import utcnow
from hymem.indexes.lance.tables import LanceTables

log = get_logger("hymem.indexes.lance.upkeep")

SCALAR_INDEX_MIN_ROWS = 5_000  # below this a scan is as fast as a BTREE lookup
LIST_INDEX_COLUMNS = frozenset({"meta_tokens"})  # indexed LABEL_LIST, not BTREE
# Every commit leaves a LanceDB version (a manifest, plus the files only it references), and
# LanceDB keeps them 7 days by default: a LongMemEval-S dev run left 8.2 GB on disk for 442 MB
# of rows, and each compaction spent ~3 s per table walking ~10k manifests while holding the
# write lock (12 s a question by the end). Compaction now prunes versions older than this. It
# bounds how far `hymem repair` can roll a damaged table back. A reader in another process
# re-checks the newest version on every read, so only a query running while a compaction prunes
# the version it started on can lose files: it runs again on the newest (`LanceTables.fresh`).
VERSION_RETENTION = timedelta(minutes=5)


def prune_age(now: datetime) -> timedelta:
    """The age LanceDB's cleanup takes (it measures it back from its own wall clock) that
    prunes exactly the versions committed before the cutoff `now - VERSION_RETENTION`: a
    cutoff fixed by the caller's clock, so a test's injected clock decides what is pruned,
    not how long the machine took to get there. Never negative (0: all but the latest)."""
    return max(timedelta(0), utcnow() - (now - VERSION_RETENTION))


# An erasure's compaction preempted by other workers' updates of the same fragments (theirs
# commit, its rewrite is refused as a retryable conflict) is compacted again this many times in
# all before the erasure reports the store contended.
REWRITE_ATTEMPTS = 6

# PQ codes one byte per sub-vector: 8 dimensions each (48 bytes per 384-d MiniLM vector) keeps
# recall high with refine; a dimension 8 does not divide falls back to its largest divisor up
# to MAX_SUB_VECTORS (LanceDB requires dim % sub_vectors == 0).
PQ_DIMS_PER_SUB_VECTOR = 8
MAX_SUB_VECTORS = 48


def compact(
    lance: LanceTables, name: str, *, scalar_columns: Sequence[str], now: datetime | None = None
) -> None:
    """Create missing BTREE indexes past SCALAR_INDEX_MIN_ROWS, then compact fragments, prune
    versions committed before `now - VERSION_RETENTION` (`now`: the caller's clock, default
    the wall clock) and fold new rows into the existing indexes. The compaction is a Lance
    Rewrite, which can conflict with a concurrent delete or merge_insert: the caller holds
    the write lock."""
    from lancedb.index import BTree, LabelList

    table = lance.table(name)
    if table.count_rows() >= SCALAR_INDEX_MIN_ROWS:
        existing = {tuple(cfg.columns) for cfg in lance.indices(name)}
        for col in scalar_columns:
            if (col,) not in existing:
                # a list column (metadata tokens) takes a LABEL_LIST index: array_has(_any)
                kind = LabelList() if col in LIST_INDEX_COLUMNS else BTree()
                table.create_index(col, config=kind)
    keep = prune_age(utcnow() if now is None else now)
    with warnings.catch_warnings():  # "cleanup_older_than=0 removes every version": asked
        warnings.simplefilter("ignore", UserWarning)
        table.optimize(cleanup_older_than=keep)
    lance.refresh_indexed(name)


def purge_deleted(
    lance: LanceTables, name: str, *, keep: timedelta, unverified: bool = False
) -> None:
    """Rewrite every fragment with deleted rows, whatever their share (LanceDB's own
    compaction waits for 10 %), then prune versions older than `keep`. `unverified`: also
    delete files no version references (a failed commit's leftovers), which is safe only
    for the tables' sole writer: another process's commit in flight has written its data
    files but not yet the manifest naming them, and deleting them would leave that commit
    pointing at nothing. Only erasure calls this, under the write lock (see
    `indexes/store/erasure.py`)."""
    table = lance.table(name)

    def compact() -> None:
        table.to_lance().optimize.compact_files(
            materialize_deletions=True, materialize_deletions_threshold=0.0
        )
        table.checkout_latest()
        with warnings.catch_warnings():  # "cleanup_older_than=0 removes every version"
            warnings.simplefilter("ignore", UserWarning)
            table.optimize(cleanup_older_than=keep, delete_unverified=unverified)

    _rewrite(lance, name, compact)
    lance.refresh_indexed(name)


def _rewrite(lance: LanceTables, name: str, call: Callable[[], None]) -> None:
    """A compaction of `name`, run again (bounded, after a short random pause) when another
    worker's update of a fragment it rewrote committed first: LanceDB then refuses the
    rewrite as a retryable conflict, and compacting again only redoes what is left."""
    for attempt in range(1, REWRITE_ATTEMPTS + 1):
        try:
            lance.fresh(name, call)
            return
        except (RuntimeError, OSError, ValueError) as exc:
            if "Retryable commit conflict" not in str(exc) or attempt == REWRITE_ATTEMPTS:
                raise  # the store reports it as contended: transient
            log.info("lance.rewrite_retry", table=name, attempt=attempt)
            lance.table(name).checkout_latest()
            time.sleep(random.uniform(0.05, 0.25) * attempt)


def build_vector_index(lance: LanceTables, name: str) -> tuple[int, int]:
    """(Re)train the IVF_PQ index on the table as it is now, replacing any older one;
    returns (rows trained on, partitions). Needs no write lock: the CreateIndex commit is
    rebased over appends, deletes and updates committed while it trained (rows added
    meanwhile are searched flat until the next compaction folds them in)."""
    from lancedb.index import IvfPq

    table = lance.table(name)
    rows = table.count_rows()
    dim = table.schema.field("vector").type.list_size
    partitions = max(1, int(math.sqrt(rows)))
    table.create_index(  # with `config`, the first argument is the column name
        "vector",
        config=IvfPq(
            distance_type="cosine",
            num_partitions=partitions,
            num_sub_vectors=_sub_vectors(dim),
        ),
        replace=True,
    )
    lance.refresh_indexed(name)
    log.info("vectors.ivf_pq_built", table=name, rows=rows, partitions=partitions)
    return rows, partitions


def _sub_vectors(dim: int) -> int:
    """PQ sub-vectors for `dim` (see PQ_DIMS_PER_SUB_VECTOR)."""
    if dim % PQ_DIMS_PER_SUB_VECTOR == 0:
        return dim // PQ_DIMS_PER_SUB_VECTOR
    return max(d for d in range(1, MAX_SUB_VECTORS + 1) if dim % d == 0)


__all__ = [
    "LIST_INDEX_COLUMNS",
    "REWRITE_ATTEMPTS",
    "SCALAR_INDEX_MIN_ROWS",
    "VERSION_RETENTION",
    "build_vector_index",
    "compact",
    "prune_age",
    "purge_deleted",
]
