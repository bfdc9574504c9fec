"""LanceDB access: the tables that are hymem's source of truth, their queries and indexes.

Only the `hymem.indexes.lance` package talks to LanceDB: this module for the tables, and
`fragments.py` for the per-fragment reads of Lance's own dataset API (the lexical replica's
catch-up). Filters arrive as SQL strings built by `sql.py` (escaped literals only). Dense
search always uses cosine distance and LanceDB's default prefiltering, so `user_id`/status/time
filters apply before the top-k cut. Vector queries always select `_distance` explicitly:
LanceDB 0.40 logs a deprecation warning on every vector query that names its output columns
without it, and hymem leaves the process's logging settings alone.

Calls arrive from several threads: the store's writer, searches, and the index maintainer
(`store/maintenance.py`), whose IVF_PQ builds commit beside the writer's appends and updates.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from hymem.core.errors import CommitConflictError
from hymem.core.logging import get_logger
from hymem.indexes.protocol import Vector

log = get_logger("hymem.indexes.lance.tables")
T = TypeVar("T")

# IVF partitions probed, and exact re-ranking of refine_factor * k PQ candidates. This path
# serves only users over `dense_cache_mb` (everyone else is searched exactly in memory).
# Measured at 1M MiniLM-like rows (1,000 partitions), 10 users, user-prefiltered, k=10, recall@10
# against brute force (/tmp profiling grid, 2026-11-23): 20/20 0.850, 50/20 0.892, 20/50 0.907,
# 50/50 0.973, 100/50 0.973; p50 25 ms at 20/20, 28.5 ms at 50/50. At 100k rows 20/20 gave 0.957.
NPROBES = 50
REFINE_FACTOR = 50
# An erasure prunes every older version of each table at once (`store/erasure.py`), so a read or
# commit still on an older version (another worker's, whose handle re-checks the newest version
# only every `refresh_s`, or a search in this process) finds a file of that version gone: a
# "Not found" of a file under the table's folder. Such a call is run again on the newest
# version, at most this many times in all; a file missing from the newest version itself is
# damage, raised as it is (the store maps it to StoreCorruptedError).
PRUNED_ATTEMPTS = 5


def pruned_under(exc: BaseException) -> bool:
    """Whether `exc` is LanceDB missing a file of a table (a data, deletion, index, manifest or
    transaction file): pruned under the call, or damage if the newest version misses it."""
    text = str(exc)
    return (
        isinstance(exc, RuntimeError | OSError | ValueError)
        and "Not found" in text
        and ".lance/" in text
    )


class LanceTables:
    """The LanceDB database under `path`; tables are opened once and kept."""

    def __init__(
        self,
        path: Path | str,
        *,
        read_only: bool,
        storage_options: dict[str, str] | None = None,
        refresh: timedelta | None = None,
    ) -> None:
        """`path` is a folder or an object-store URI (`storage_options` then say how to reach
        it). `refresh` overrides how stale a read may be: an object store written by several
        workers passes its staleness bound; a local folder keeps the rule below."""
        self.path = path
        # Readers in other processes must see the writer's commits: check for new versions on
        # every read. The single writer sees its own writes without that cost.
        interval = timedelta(seconds=0) if read_only else None
        if refresh is not None:
            interval = refresh
        import lancedb  # deferred: importing it takes seconds, and `import hymem` must not

        self._db = lancedb.connect(
            str(path), read_consistency_interval=interval, storage_options=storage_options
        )
        self._tables: dict[str, Any] = {}
        # Has an IVF index? Cached for dense search; refreshed after every build or compaction
        # (those run on the index maintainer's thread, hence the lock).
        self._indexed: dict[str, bool] = {}
        self._indexed_lock = threading.Lock()

    def names(self) -> set[str]:
        return set(self._db.list_tables().tables)

    def ensure(self, name: str, schema: pa.Schema) -> None:
        """Open `name`, creating it empty with `schema` if it does not exist."""
        if name in self._tables:
            return
        if name in self.names():
            self._tables[name] = self._db.open_table(name)
        else:
            self._tables[name] = self._db.create_table(name, schema=schema, exist_ok=True)

    def drop(self, name: str) -> None:
        """Remove a table (only `hymem repair`, for a table no version of which reads)."""
        self._tables.pop(name, None)
        if name in self.names():
            self._db.drop_table(name)

    def open_existing(self, name: str) -> bool:
        if name in self._tables:
            return True
        if name not in self.names():
            return False
        self._tables[name] = self._db.open_table(name)
        return True

    def table(self, name: str) -> Any:
        return self._tables[name]

    def fresh(self, name: str, call: Callable[[], T]) -> T:
        """`call` on table `name`, run again on the newest version while it fails on files
        pruned under an older one (`pruned_under`). Nothing a failed call wrote is committed
        (LanceDB writes the manifest last), so running a write again stores it once. The newest
        version failing twice the same way is damage: that error is raised as it is."""
        failed_at: int | None = None
        for attempt in range(1, PRUNED_ATTEMPTS + 1):
            try:
                return call()
            except (RuntimeError, OSError, ValueError) as exc:
                if not pruned_under(exc):
                    raise
                table = self._tables[name]
                table.checkout_latest()
                newest = int(table.version)
                if newest == failed_at:
                    raise  # the newest version itself misses the file
                if attempt == PRUNED_ATTEMPTS:
                    raise CommitConflictError(
                        f"the table {name!r} had its older versions pruned under this call "
                        f"{attempt} times in a row (a concurrent erasure); nothing was written "
                        "by it: retry the call"
                    ) from exc
                failed_at = newest
                log.info("lance.pruned_retry", table=name, version=newest, attempt=attempt)
        raise AssertionError("unreachable")

    def refresh(self) -> None:
        """Move every open table to its newest version now (other workers commit too)."""
        for table in self._tables.values():
            table.checkout_latest()

    def schema(self, name: str) -> pa.Schema:
        return self._tables[name].schema

    def version(self, name: str) -> int:
        return int(self._tables[name].version)

    # --- writes -------------------------------------------------------------------------------
    def add(self, name: str, data: pa.Table) -> None:
        if data.num_rows:
            self.fresh(name, lambda: self._tables[name].add(data))

    def delete(self, name: str, where: str) -> None:
        self.fresh(name, lambda: self._tables[name].delete(where))

    def overwrite(self, name: str, data: pa.Table) -> None:
        """Make `data` the table's whole content in one commit: writers racing to write the
        same small table (a store's identity) leave one copy, where a delete then an add,
        two commits, could interleave into two."""
        self.fresh(name, lambda: self._tables[name].add(data, mode="overwrite"))

    def upsert(self, name: str, data: pa.Table, on: Sequence[str]) -> None:
        """Replace rows matching on `on`, insert the rest (one atomic LanceDB commit)."""
        if data.num_rows:
            self.fresh(
                name,
                lambda: (
                    self._tables[name]
                    .merge_insert(list(on))
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(data)
                ),
            )

    def update_matched(self, name: str, data: pa.Table, on: Sequence[str]) -> None:
        """Set `data`'s columns (a subset of the table's) on the rows matching on `on`; rows
        that match nothing are skipped. One LanceDB commit, and no read of the rows first."""
        if data.num_rows:
            self.fresh(
                name,
                lambda: (
                    self._tables[name]
                    .merge_insert(list(on))
                    .when_matched_update_all()
                    .execute(data)
                ),
            )

    # --- reads --------------------------------------------------------------------------------
    def query(
        self,
        name: str,
        where: str | None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> pa.Table:

        def run() -> pa.Table:
            q = self._tables[name].search()
            if where:
                q = q.where(where)
            if columns is not None:
                q = q.select(list(columns))
            return q.limit(limit).to_arrow()

        return self.fresh(name, run)

    def rows(
        self,
        name: str,
        where: str | None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.query(name, where, columns, limit).to_pylist()
        return rows

    def batches(
        self, name: str, where: str | None, columns: Sequence[str] | None, batch_size: int
    ) -> Iterator[pa.RecordBatch]:

        def scan() -> Iterator[pa.RecordBatch]:
            q = self._tables[name].search()
            if where:
                q = q.where(where)
            if columns is not None:
                q = q.select(list(columns))
            return iter(q.limit(None).to_batches(batch_size))

        # Run again on the newest version only while nothing was handed out yet: a scan
        # restarted part-way would hand the first batches out twice.
        batches = self.fresh(name, lambda: _started(scan()))
        yield from batches

    def count(self, name: str, where: str | None = None) -> int:
        table = self._tables[name]
        return int(
            self.fresh(name, lambda: table.count_rows(where) if where else table.count_rows())
        )

    def has_vector_index(self, name: str) -> bool:
        return any(cfg.index_type.upper().startswith("IVF") for cfg in self.indices(name))

    def indices(self, name: str) -> list[Any]:
        return self.fresh(name, lambda: list(self._tables[name].list_indices()))

    def vector_search(
        self, name: str, vector: Vector, k: int, where: str, columns: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Top-k rows by cosine distance among rows matching `where` (prefiltered)."""
        indexed = self.vector_indexed(name)

        def run() -> list[dict[str, Any]]:
            q = (
                self._tables[name]
                .search(list(vector), vector_column_name="vector")
                .distance_type("cosine")
                .where(where, prefilter=True)
                .select([*columns, "_distance"])  # naming it silences a per-query warning
                .limit(k)
            )
            if indexed:
                q = q.nprobes(NPROBES).refine_factor(REFINE_FACTOR)
            return list(q.to_arrow().to_pylist())

        return self.fresh(name, run)

    def vector_indexed(self, name: str) -> bool:
        found = self._indexed.get(name)
        if found is None:
            with self._indexed_lock:
                found = self._indexed.get(name)
                if found is None:
                    found = self._indexed[name] = self.has_vector_index(name)
        return found

    def vector_index_rows(self, name: str) -> int | None:
        """Rows the IVF index covers now (None without one); compaction adds new rows to it,
        so this is the trained row count only right after a build."""
        for cfg in self.indices(name):
            if cfg.index_type.upper().startswith("IVF"):
                stats = self._tables[name].index_stats(cfg.name)
                return None if stats is None else int(stats.num_indexed_rows)
        return None

    def refresh_indexed(self, name: str) -> None:
        """Re-read whether `name` has an IVF index, so dense search starts (or stops) using
        it. Under the cache lock, so a search that looked before a build cannot store its
        stale answer after this refresh."""
        with self._indexed_lock:
            self._indexed[name] = self.has_vector_index(name)

    def fragments(self, name: str) -> int:
        stats = self._tables[name].stats()
        frag = getattr(stats, "fragment_stats", None) or stats.get("fragment_stats", {})
        num = getattr(frag, "num_fragments", None)
        return int(num if num is not None else frag.get("num_fragments", 0))


def _started(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`batches` with its first batch already read (where a pruned file shows first)."""
    first = next(batches, None)
    return iter(()) if first is None else itertools.chain([first], batches)


__all__ = ["NPROBES", "PRUNED_ATTEMPTS", "REFINE_FACTOR", "LanceTables", "pruned_under"]
