"""The memory folder: LanceDB tables (source of truth) plus a derived Tantivy index.

Layout under `path`:
    lance/            LanceDB database: tables turns, segments, summaries, traces, meta
    tantivy/          lexical index over summaries and segments (derived; rebuildable)
    lexical_sync.json LanceDB table versions the lexical index was last synced with
    vector_index.json rows each table's IVF_PQ index was trained on (retrain when drifted)
    journal.json      present only while a multi-table write is in flight (crash repair)
    writer.lock       filelock held by the single writer for the store's lifetime
    meta.json         schema_version, embedder name, dimension, created_at (mirrored in `meta`)

Damage to what can be rebuilt is repaired, never fatal: a lost or garbage meta.json is read from
the `meta` table (and rewritten by a writer), the lexical index and its sync record are rebuilt
from LanceDB (a reader searches dense only meanwhile, `lexical_unavailable`), and an unreadable
journal is settled by the rows' own state (`repair.py`).

`Store` keeps the `Storage` protocol (`indexes/protocol.py`) by composition: it opens the folder,
guards every call (open? writable?), serialises writes with one lock (its reads and searches
are in `store_reads.py`), and delegates to small collaborators that each know one concern:

    FolderMeta    meta.json and its `meta` table copy     (folder.py)
    TurnLog       turns, the write-ahead log              (turn_log.py)
    RecordReader  segment/summary reads, dense + lexical  (records.py)
    DenseRows     exact in-memory dense search per user   (dense_rows.py, dense_cache.py)
    CommitWriter  the journaled multi-table writes        (commits.py)
    Eraser        a user's rows deleted and purged        (erasure.py)
    Recovery      journal settling and lexical repair     (recovery.py, repair.py)
    LexicalSync   Tantivy's sync record and rebuild       (lexical_sync.py)
    Compactor     compaction and ANN indexes, on the      (maintenance.py)
                  store's `hymem-index-*` thread          (index_worker.py)
    TraceTable    one row per ask                         (trace_table.py)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.errors import ReadOnlyStoreError, StoreClosedError, StoreError
from hymem.indexes.dense.cache import DenseCache
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.folder.lock import WriterLock
from hymem.indexes.folder.meta import open_folder
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.trace_table import TraceTable
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.sync import LexicalSync
from hymem.indexes.location import StoreLocation, parse_location
from hymem.indexes.protocol import (
    HIT_COLUMNS,
    TimeRange,
)
from hymem.indexes.store.commits import CommitWriter, Journal
from hymem.indexes.store.erasure import Eraser
from hymem.indexes.store.faults import storage_faults
from hymem.indexes.store.journals import FolderJournals, Journals
from hymem.indexes.store.maintenance import VECTOR_INDEX_MIN_ROWS, Compactor
from hymem.indexes.store.reads import StoreReads
from hymem.indexes.store.records import RecordReader
from hymem.indexes.store.recovery import Recovery
from hymem.indexes.store.repair import RowRepair, RowSettler
from hymem.logging import get_logger

if TYPE_CHECKING:
    from hymem.indexes.objects.store import RemoteSettings
from hymem.types import (
    SegmentRecord,
    StatusChange,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)

SCHEMA_VERSION = S.SCHEMA_VERSION
# Default bound of the in-memory dense index (MemoryConfig.dense_cache_mb): 1M MiniLM vectors.
DEFAULT_DENSE_CACHE_BYTES = 2048 * 1024 * 1024

log = get_logger("hymem.indexes.store.store")


class Store(StoreReads):
    """Opened once per Memory. Thread-safe for concurrent readers; one writer process.

    Each public method's promise is written once, on `Storage`; here they only guard and
    delegate."""

    def __init__(
        self,
        location: StoreLocation,
        *,
        embedder_name: str,
        dim: int,
        read_only: bool,
        vector_index_min_rows: int,
        dense_cache_bytes: int,
    ) -> None:
        """Use `Store.open`: this only sets attributes; nothing is opened or locked yet."""
        self.location = location
        self.path: Path | str = location.uri if location.remote else Path(location.uri)
        self.read_only = read_only
        self.embedder_name = embedder_name
        self.dim = dim
        self.vector_index_min_rows = vector_index_min_rows
        self.dense_cache = DenseCache(dense_cache_bytes, dim)
        self._write_lock = threading.RLock()
        self._lock: WriterLock | None = None
        self._meta: dict[str, Any] = {}
        self._closed = True

    @classmethod
    def open(
        cls,
        path: str | Path | StoreLocation,
        *,
        embedder_name: str,
        dim: int,
        read_only: bool = False,
        vector_index_min_rows: int = VECTOR_INDEX_MIN_ROWS,
        dense_cache_bytes: int = DEFAULT_DENSE_CACHE_BYTES,
        storage_options: dict[str, str] | None = None,
        remote: RemoteSettings | None = None,
        cache_dir: str | Path | None = None,
    ) -> Store:
        """Create or open. Raises StoreLockedError, SchemaVersionError, EmbedderMismatchError.

        `path` is a folder, or an object-store URI (`storage_options` say how to reach it,
        `remote` how workers share it): that opens a `store_remote.RemoteStore`.
        `dense_cache_bytes` bounds the in-memory exact dense index (`dense_cache`); 0 sends
        every dense query to LanceDB."""
        location = (
            path
            if isinstance(path, StoreLocation)
            else parse_location(path, storage_options=storage_options, cache_dir=cache_dir)
        )
        if location.remote and cls is Store:
            from hymem.indexes.objects.store import RemoteStore

            return RemoteStore.open(
                location,
                embedder_name=embedder_name,
                dim=dim,
                read_only=read_only,
                vector_index_min_rows=vector_index_min_rows,
                dense_cache_bytes=dense_cache_bytes,
                remote=remote,
            )
        self = cls(
            location,
            embedder_name=embedder_name,
            dim=int(dim),
            read_only=read_only,
            vector_index_min_rows=vector_index_min_rows,
            dense_cache_bytes=dense_cache_bytes,
        )
        self._configure(remote)
        self._prepare()
        self._closed = False
        try:
            with storage_faults(self.path, "opening the memory"):
                self._open_parts()
        except BaseException:
            self._closed = True
            self._release_parts()  # a failed open holds nothing: no thread, no Tantivy lock
            self._unlock()
            raise
        log.info("store.open", path=str(self.path), read_only=read_only, dim=self.dim)
        return self

    def _configure(self, remote: RemoteSettings | None) -> None:
        """Settings only an object store uses (`store_remote`)."""

    def _prepare(self) -> None:
        """A folder: check it is one (creating it for a writer) and take the writer lock."""
        assert isinstance(self.path, Path)
        if self.read_only:
            if not self.path.is_dir():
                raise StoreError(f"no hymem memory at {self.path} to open read-only")
        else:
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"{self.path} exists and is not a folder")
            self.path.mkdir(parents=True, exist_ok=True)
            self._lock = WriterLock(self.path)

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def _release_parts(self) -> None:
        for part in ("_compactor", "_lex"):
            obj = getattr(self, part, None)
            if obj is not None:
                try:
                    obj.close()
                except Exception as exc:  # the open's own error is the one to raise
                    log.warning("store.release_failed", part=part, error=repr(exc))

    def _open_parts(self) -> None:
        """Check the folder's meta, open the tables and the lexical index, wire the
        collaborators, then repair whatever a crash left (before serving anything)."""
        assert isinstance(self.path, Path)
        self._lance, self._meta, created = open_folder(
            self.path, read_only=self.read_only, embedder_name=self.embedder_name, dim=self.dim
        )
        self._lex = LexicalIndex(
            self.path / "tantivy", writable=not self.read_only, expected=not created
        )
        self._turns = TurnLog(self._lance)
        self._dense = DenseRows(self._lance, self.dense_cache, self.dim, read_only=self.read_only)
        self._records = RecordReader(
            self._lance, self._lex, self._dense, self.dim, read_only=self.read_only
        )
        self._traces = TraceTable(self._lance)
        self._sync = LexicalSync(self.path, self._lance, self._lex)
        self._compactor = Compactor(
            self._lance,
            self._sync,
            self.vector_index_min_rows,
            folder=self.path,
            write_lock=self._write_lock,
            background=not self.read_only,
            needs_ann=self._needs_ann,
        )
        self._dense.on_oversized = self._compactor.wake
        if created:
            self._sync.record()  # a new, empty store is in sync by construction
        self._wire(FolderJournals(Journal(self.path)))

    def _wire(self, journals: Journals) -> None:
        """The writers and the repair over the parts `_open_parts` opened; then repair."""
        self._journals = journals
        self._commits = CommitWriter(
            self._lance, self._lex, self._turns, journals, self._sync, self._compactor, self.dim
        )
        self._eraser = Eraser(self._lance, self._sync, journals)
        self._recovery = Recovery(
            self.path, journals, self._sync, self._commits, self._turns, self._lance, self._eraser
        )
        self._recovery.repair_on_open(read_only=self.read_only)

    def _needs_ann(self, table: str) -> bool:
        """Searches read a table's ANN index only for a user too big for the dense cache (or
        with the cache off); an index nobody reads is not built in the background."""
        return not self.dense_cache.enabled or table in self._dense.oversized

    def meta(self) -> dict[str, Any]:
        return dict(self._meta)

    @property
    def tables(self) -> LanceTables:
        """The LanceDB tables, read-only use by tools (doctor, repair) and tests; a write
        through them bypasses the journal and the lexical index."""
        return self._lance

    @property
    def lexical_unavailable(self) -> bool:
        return not self._lex.available

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._compactor.close()  # first: joins the index thread (waits out a running build)
        self.dense_cache.clear()
        self._lex.close()
        self._unlock()
        log.info("store.close", path=str(self.path))

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the store at {self.path} is closed")

    def _check_writable(self) -> None:
        self._check_open()
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} was opened read-only")

    # --- many writers (an object store overrides these; a folder has one writer) ---------
    def writing(self, user_id: str) -> AbstractContextManager[bool]:
        """Hold `user_id`'s writes for the block; yields True when another writer wrote the
        user since this process last did (the caller then drops what it cached of them)."""
        return nullcontext(False)

    def catch_up(self) -> dict[str, int]:
        """See what other writers committed now (an object store; a folder has no others)."""
        self._check_open()
        return {}

    def _fence(self, user_id: str) -> None:
        """Right before a write of `user_id`: still entitled to write it?"""

    # --- turns ---------------------------------------------------------------------------
    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        self._check_open()
        with storage_faults(self.path, "reading turns"):
            return self._turns.get(user_id, ids=ids, status=status)

    def next_seq(self, user_id: str) -> int:
        self._check_open()
        with storage_faults(self.path, "reading turns"):
            return self._turns.next_seq(user_id)

    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        self._check_writable()
        if not turns:
            return []
        for user in sorted({t.user_id for t in turns}):
            self._fence(user)
        with self._write_lock, storage_faults(self.path, "appending turns"):
            new = self._turns.append(turns, fresh_ids=fresh_ids)
            self._compactor.note_write(vector_tables=False)
        return [t.id for t in new]

    # --- journaled writes ----------------------------------------------------------------
    def commit_segments(
        self,
        user_id: str,
        segments: Sequence[SegmentRecord],
        summaries: Sequence[SummaryRecord],
        stored_turn_ids: Sequence[str],
    ) -> None:
        self._check_writable()
        self._fence(user_id)
        with self._write_lock, storage_faults(self.path, "committing segments"):
            try:
                self._recovery.settle_leftover(user_id)
                self._commits.commit_segments(user_id, segments, summaries, stored_turn_ids)
            except BaseException:
                self._recovery.after_failure(user_id, roll_back=True)  # undone: never served
                self.dense_cache.invalidate(user_id)  # whatever landed is read afresh
                raise
            self._dense.committed(user_id, segments, summaries)

    def apply_summary_changes(
        self, user_id: str, new: Sequence[SummaryRecord], changes: Sequence[StatusChange]
    ) -> None:
        self._check_writable()
        self._fence(user_id)
        with self._write_lock, storage_faults(self.path, "applying summary changes"):
            try:
                self._recovery.settle_leftover(user_id)
                self._commits.apply_summary_changes(user_id, new, changes)
            except BaseException:
                self._recovery.after_failure(user_id)
                raise
            finally:  # statuses moved: the user's summaries are read afresh on next search
                self.dense_cache.invalidate(user_id, [S.SUMMARIES])

    # --- erasure -------------------------------------------------------------------------
    def erase_user(self, user_id: str) -> dict[str, int]:
        self._check_writable()
        # The maintenance thread compacts under this lock too; waiting it out first keeps a
        # long IVF build from racing the purge's version pruning.
        self._compactor.wait_idle()
        self._fence(user_id)
        with self._write_lock, storage_faults(self.path, "erasing a user"):
            try:
                self._recovery.settle_leftover(user_id)
                return self._eraser.erase(user_id)
            finally:
                self.dense_cache.invalidate(user_id)

    # --- traces --------------------------------------------------------------------------
    def write_trace(self, trace: dict[str, Any]) -> None:
        self._check_writable()
        with self._write_lock, storage_faults(self.path, "writing a trace"):
            self._traces.write(trace)

    # --- maintenance ---------------------------------------------------------------------
    def settle_rows(self, *, summaries_lost: bool = False) -> RowRepair:
        """Make turns, segments and summaries agree by their own state (`repair.RowSettler`):
        what `hymem repair` runs after restoring damaged tables."""
        self._check_writable()
        with self._write_lock:
            settler = RowSettler(self._lance, self._commits, self._turns)
            return settler.settle(summaries_lost=summaries_lost)

    def reindex(self, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        self._check_writable()
        with self._write_lock, storage_faults(self.path, "rebuilding the lexical index"):
            counts = self._sync.rebuild(progress, fresh=True)  # never opens a damaged folder
        log.info("store.reindex", path=str(self.path), **counts)
        return counts

    def optimize(self) -> None:
        self._check_writable()
        with storage_faults(self.path, "optimizing"):
            self._compactor.optimize()  # takes the write lock itself, after the maintenance lock
        log.info("store.optimize", path=str(self.path))


__all__ = ["HIT_COLUMNS", "SCHEMA_VERSION", "Store", "TimeRange"]
