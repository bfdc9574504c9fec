"""Opening a memory in a local folder: the folder's parts, assembled into a `Store`.

Layout under the folder:
    lance/            LanceDB database: tables turns, segments, summaries, traces, meta
    tantivy/          lexical index over summaries and segments (derived; rebuildable)
    lexical_sync.json LanceDB table versions the lexical index was last synced with
    vector_index.json rows each table's IVF_PQ index was trained on (retrain when drifted)
    journal.json      present only while a multi-table write is in flight (crash repair)
    sleep/journal.jsonl  the sleep journal's decisions, fsync'd
    writer.lock       filelock held by the single writer for the store's lifetime
    meta.json         schema_version, embedder name, dimension, created_at (mirrored in `meta`)

Damage to what can be rebuilt is repaired, never fatal: a lost or garbage meta.json is read from
the `meta` table (and rewritten by a writer), the lexical index and its sync record are rebuilt
from LanceDB (a reader searches dense only meanwhile, `lexical_unavailable`), and an unreadable
journal is settled by the rows' own state (`store/repair.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from hymem.core.errors import StoreError
from hymem.core.logging import get_logger
from hymem.indexes.dense.cache import DenseCache
from hymem.indexes.dense.rows import DenseRows
from hymem.indexes.folder.access import FolderAccess
from hymem.indexes.folder.journal import FolderJournals, Journal
from hymem.indexes.folder.lock import WriterLock
from hymem.indexes.folder.meta import open_folder
from hymem.indexes.folder.sleep_file import FileLines, sleep_file
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.sync import LexicalSync
from hymem.indexes.store.assemble import KindParts, Maintenance, assemble
from hymem.indexes.store.faults import storage_faults
from hymem.indexes.store.store import Store

log = get_logger("hymem.indexes.folder")


def _writer_lock(folder: Path, read_only: bool) -> WriterLock | None:
    """Check the folder is one (a writer creates it) and take the single writer's lock."""
    if read_only:
        if not folder.is_dir():
            raise StoreError(f"no hymem memory at {folder} to open read-only")
        return None
    if folder.exists() and not folder.is_dir():
        raise StoreError(f"{folder} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    return WriterLock(folder)


def _needs_ann(cache: DenseCache) -> Callable[[DenseRows], Callable[[str], bool]]:
    """Searches read a table's ANN index only for a user too big for the dense cache (or with
    the cache off); an index nobody reads is not built in the background."""

    def bind(dense: DenseRows) -> Callable[[str], bool]:
        return lambda table: not cache.enabled or table in dense.oversized

    return bind


def open_folder_store(
    folder: Path,
    *,
    embedder_name: str,
    dim: int,
    read_only: bool,
    vector_index_min_rows: int,
    dense_cache_bytes: int,
) -> Store:
    """Create or open the memory in `folder`. Raises StoreLockedError (another writer),
    SchemaVersionError, EmbedderMismatchError, StoreError (not a folder, nothing to read)."""
    access = FolderAccess(_writer_lock(folder, read_only))
    with ExitStack() as undo:  # a failed open holds nothing: no thread, no lock, no Tantivy
        undo.callback(access.close)
        with storage_faults(folder, "opening the memory"):
            lance, meta, created = open_folder(
                folder, read_only=read_only, embedder_name=embedder_name, dim=dim
            )
            lex = LexicalIndex(folder / "tantivy", writable=not read_only, expected=not created)
            undo.callback(lex.close)
            feed = LexicalSync(folder, lance, lex)
            cache = DenseCache(dense_cache_bytes, dim)
            kind = KindParts(
                path=folder,
                read_only=read_only,
                dim=dim,
                meta=meta,
                lance=lance,
                lex=lex,
                feed=feed,
                journals=FolderJournals(Journal(folder)),
                access=access,
                sleep_log=FileLines(sleep_file(folder), read_only=read_only),
                dense_cache=cache,
                write_lock=threading.RLock(),
                maintenance_folder=folder,
                sole_writer=True,  # the writer lock: no other process writes the tables
            )
            upkeep = Maintenance(
                vector_index_min_rows=vector_index_min_rows,
                background=not read_only,
                automatic=True,
                needs_ann=_needs_ann(cache),
            )
            parts = assemble(kind, upkeep, dense_read_only=read_only)
            undo.callback(parts.compactor.close)
            if created:
                feed.record()  # a new, empty store is in sync by construction
            parts.recovery.repair_on_open(read_only=read_only)
        undo.pop_all()
    log.info("store.open", path=str(folder), read_only=read_only, dim=dim)
    return Store(parts)


__all__ = ["open_folder_store"]
