"""Compaction and vector-index upkeep for the LanceDB tables, off the user's write path.

Every LanceDB `add`, `delete` or `merge_insert` leaves a new fragment or deletion file, and
queries slow down as they pile up; past `vector_index_min_rows` rows an IVF_PQ index beats a flat
scan, and an index trained on a fraction of today's rows clusters them badly. So:

* every `OPTIMIZE_EVERY` writes the tables are compacted (fragments merged, BTREE indexes on
  `id`/`user_id` created, new rows folded into the existing indexes);
* a vector table past `vector_index_min_rows` without an IVF_PQ index gets one, once a search
  could read it: searches go to LanceDB's index only for a user whose rows do not fit the
  store's exact in-memory dense cache (or with that cache off), so a store of many users who
  each fit never pays for an index nobody reads (in a LongMemEval-S run, four builds of 20k to
  80k rows that slowed the questions ingested meanwhile from ~42 s to 76-94 s);
* an index is retrained from scratch (`replace=True`, sqrt(rows) partitions) once the table holds
  more than `VECTOR_INDEX_DRIFT` times the rows it was trained on. Compaction only appends new
  rows to the old partitions, so without a retrain the centroids drift from the data. The trained
  row counts are kept in `vector_index.json`, so a reopened store still knows them.

Commits only count (`note_write`, under the store's write lock) and signal the store's
`IndexWorker` thread, which does the work: compaction under the write lock (a Lance Rewrite can
conflict with the writer's deletes and merge_inserts; it is quick), IVF_PQ builds without it (a
CreateIndex commit is rebased over the appends, deletes and updates committed while it trained;
a build takes ~55 s at 100k MiniLM rows on two cores, far too long to hold a user's `add()`).
`optimize()` (`Store.optimize`, `hymem optimize`) does all due work synchronously instead.
One maintenance lock serialises the thread and `optimize()`, and is always taken before the
write lock, never after it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hymem.core.errors import StoreError
from hymem.core.logging import get_logger
from hymem.core.time import Clock, utcnow
from hymem.indexes.jsonfile import read_json, write_json_atomic
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import upkeep
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.feed import LexicalFeed
from hymem.indexes.store.index_worker import IndexWorker

log = get_logger("hymem.indexes.store.maintenance")

# Writes between automatic compactions: with hymem's batched commits 64 fragments still query
# fast, and compacting more often costs more than it saves on a write-heavy ingest.
OPTIMIZE_EVERY = 64
# Below this many rows flat search is fast enough; past it an IVF_PQ index wins (measured in
# ARCHITECTURE.md §11: flat search is ~20x slower than numpy and grows linearly).
VECTOR_INDEX_MIN_ROWS = 20_000
# Retrain once a table holds this many times the rows its index was trained on. Doubling keeps
# the total training work linear in the final size (each build costs about its row count).
VECTOR_INDEX_DRIFT = 2.0
STATE_FILE = "vector_index.json"
_JOURNAL_FILE = "journal.json"  # commits.JOURNAL_FILE (commits imports this module)

# Columns given a scalar (BTREE) index once a table is big enough: what every filter names;
# metadata tokens (agent_id, run_id and every other key) get a LABEL_LIST index.
_SCALAR_COLUMNS: dict[str, list[str]] = {
    S.SUMMARIES: ["id", "user_id", "meta_tokens"],
    S.SEGMENTS: ["id", "user_id", "meta_tokens"],
    S.TURNS: ["id", "user_id"],
    S.TRACES: [],
}
_VECTOR_TABLES = (S.SUMMARIES, S.SEGMENTS)


class IndexState:
    """`vector_index.json`: per vector table, the rows its IVF_PQ index was trained on."""

    def __init__(self, folder: Path, lance: LanceTables, *, writable: bool) -> None:
        self._file = folder / STATE_FILE
        self._lance = lance
        self._writable = writable
        try:
            self._state: dict[str, Any] = read_json(self._file) or {}
        except StoreError as exc:  # derived data: lose the counts, never the store
            log.warning("index.state_unreadable", path=str(self._file), error=str(exc))
            self._state = {}

    def trained_rows(self, table: str) -> int | None:
        """Rows the table's index was trained on; None without an index. An index from before
        this file (or with the file lost) counts the rows it covers now, recorded at once so
        later compactions, which add rows to it, do not move the baseline."""
        entry = self._state.get(table)
        if isinstance(entry, dict) and isinstance(entry.get("trained_rows"), int):
            return int(entry["trained_rows"])
        rows = self._lance.vector_index_rows(table)
        if rows is not None:
            self.record(table, rows, partitions=None)
        return rows

    def record(self, table: str, rows: int, *, partitions: int | None) -> None:
        self._state[table] = {
            "trained_rows": rows,
            "partitions": partitions,
            "built_at": utcnow().isoformat(timespec="seconds"),
        }
        if self._writable:
            write_json_atomic(self._file, self._state)


class Compactor:
    """Counts writes and keeps the tables compacted and their vector indexes fresh."""

    def __init__(
        self,
        lance: LanceTables,
        sync: LexicalFeed,
        vector_index_min_rows: int,
        *,
        folder: Path,
        write_lock: threading.RLock,
        background: bool = True,
        drift: float = VECTOR_INDEX_DRIFT,
        needs_ann: Callable[[str], bool] | None = None,
        automatic: bool = True,
        clock: Clock = utcnow,
    ) -> None:
        """`write_lock` is the store's; `background=False` (read-only stores) never starts a
        thread, and a write noted then does its maintenance inline. `needs_ann(table)` says
        whether a search could read the table's ANN index (default: always). `automatic=False`
        (an object store, whose many writers would race to compact): writes never trigger
        maintenance; only `optimize` runs it. `clock` says when a compaction runs: versions
        committed more than `VERSION_RETENTION` before it are pruned (tests inject one)."""
        self._lance = lance
        self._sync = sync
        self.vector_index_min_rows = vector_index_min_rows
        self.drift = drift
        self._folder = folder
        self._write_lock = write_lock
        self._maintenance = threading.Lock()
        self._state = IndexState(folder, lance, writable=background)
        self._writes = 0
        self._worker = IndexWorker(f"hymem-index-{folder.name}", self._maintain)
        self._background = background
        self._automatic = automatic
        self._needs_ann = needs_ann or (lambda table: True)
        self.clock = clock

    @property
    def worker(self) -> IndexWorker:
        return self._worker

    def note_write(self, *, vector_tables: bool = True) -> None:
        """Count one write (the caller holds the write lock) and, when maintenance may be due,
        wake the maintainer; never waits for index work. A write that touched no vector table
        (a turn append) cannot make an index due, so it signals only on the cadence."""
        self._writes += 1
        if not self._automatic:
            return
        if vector_tables or self._writes >= OPTIMIZE_EVERY:
            if self._background:
                self._worker.signal()
            else:
                self._maintain()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until the maintainer has nothing pending or running (tests, benchmarks)."""
        return self._worker.wait_idle(timeout)

    def close(self) -> None:
        """Stop the maintainer: waits for an IVF_PQ build under way (it cannot be interrupted)
        and drops work not yet started (a due index is found due again by the first commit
        after the next open)."""
        self._worker.stop()

    def optimize(self) -> None:
        """Everything now, synchronously: compact every table, then build or retrain every
        vector index that is due, needed by this process's searches or not (readers in other
        processes may have a smaller dense cache, or none)."""
        with self._maintenance:
            self._compact()
            for table in self._due_vector_tables(needed_only=False):
                self._build(table)

    def wake(self, table: str | None = None) -> None:
        """A search found a table whose index it needs (`needs_ann` changed): check now."""
        if self._background:
            self._worker.signal()

    def _maintain(self) -> None:
        """The maintainer's run: compact when the cadence says so or before a build, then
        build what is due, checking between steps whether the store is closing."""
        with self._maintenance:
            due = self._due_vector_tables()
            if self._writes >= OPTIMIZE_EVERY or due:
                self._compact()
            for table in due:
                if self._worker.stopping:
                    return
                self._build(table)

    def _due_vector_tables(self, *, needed_only: bool = True) -> list[str]:
        """Vector tables past the size threshold whose index is missing or has drifted; with
        `needed_only`, only those a search could read (`needs_ann`)."""
        due: list[str] = []
        for table in _VECTOR_TABLES:
            if needed_only and not self._needs_ann(table):
                continue
            rows = self._lance.count(table)
            if rows < self.vector_index_min_rows:
                continue
            if not self._lance.vector_indexed(table):
                due.append(table)
                continue
            trained = self._state.trained_rows(table)
            if trained is not None and rows > self.drift * trained:
                log.info("index.drifted", table=table, rows=rows, trained_rows=trained)
                due.append(table)
        return due

    def _compact(self) -> None:
        with self._write_lock:
            now = self.clock()  # one cutoff for every table of this compaction
            for table, cols in _SCALAR_COLUMNS.items():
                upkeep.compact(self._lance, table, scalar_columns=cols, now=now)
            self._writes = 0
            self._renew_sync()

    def _build(self, table: str) -> None:
        """Train the table's IVF_PQ index without the write lock (commits go on meanwhile),
        then note the trained rows and renew the lexical sync record under it."""
        rows, partitions = upkeep.build_vector_index(self._lance, table)
        self._state.record(table, rows, partitions=partitions)
        with self._write_lock:
            self._renew_sync()

    def _renew_sync(self) -> None:
        """Compaction and index builds move LanceDB versions on without changing a row, so the
        lexical sync record is renewed (else the next open would rebuild Tantivy). Only while
        no journaled write is unfinished: then Tantivy may really disagree, and the record
        must keep saying so until recovery settles it."""
        if not (self._folder / _JOURNAL_FILE).exists():
            self._sync.record()


__all__ = [
    "OPTIMIZE_EVERY",
    "STATE_FILE",
    "VECTOR_INDEX_DRIFT",
    "VECTOR_INDEX_MIN_ROWS",
    "Compactor",
    "IndexState",
]
