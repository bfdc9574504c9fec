"""BM25 over summaries and segments with Tantivy: a derived index, always rebuildable from LanceDB.

What it holds and how queries and filters are built (never by parsing user text) is in
`lexical_docs.py`; this module owns the index on disk, its writer, and its failures.

Damage (a deleted folder, a truncated or deleted segment file, garbage meta.json) is never
fatal: it is noted in `problem` (logged once), searches find nothing, a write raises
`StoreCorruptedError`, and the writer's store rebuilds from LanceDB into a new folder that
replaces the damaged one unread. A read-only index reopens once the index's meta.json changes.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import tantivy
from hymem.core.errors import StoreCorruptedError, StoreLockedError
from hymem.core.filters import Filter
from hymem.core.logging import get_logger
from hymem.core.types import Level
from hymem.indexes.lexical.analysis import ANALYZER_NAME, build_analyzer
from hymem.indexes.lexical.docs import (
    LEXICAL_SCHEMA_VERSION,
    MAX_QUERY_TERMS,
    LexDoc,
    build_schema,
    doc_key,
    filter_clauses,
    query_terms,
    to_document,
)
from hymem.indexes.lexical.mapped_files import segment_file_sizes, shrunk_file
from hymem.indexes.lexical.reader_threads import settle, watcher_threads

log = get_logger("hymem.indexes.lexical.index")

# Tantivy splits its writer heap between indexing threads; 32 MB is enough for one thread and
# hymem's batched commits, and keeps a writer's memory small beside the embedder.
WRITER_HEAP_BYTES = 32_000_000
# How long an open waits for the reload tantivy-py's default reader handed to a thread of its
# own (see `_index_at`); a watcher thread needs a few milliseconds of CPU, even at load ~8.
READER_SETTLE_S = 10.0
# What tantivy-py raises for a damaged or vanished index (corrupt or missing files, its lock
# file gone, a writer whose threads died), and the filesystem's errors.
TANTIVY_ERRORS = (ValueError, OSError)


class LexicalIndex:
    """One Tantivy index; the writer (if any) is created once and guarded by a lock.

    `expected`: the store is not new, so a missing folder is damage to report, not a first
    open."""

    def __init__(self, path: Path, *, writable: bool, expected: bool = False) -> None:
        self.path = path
        self.writable = writable
        self._analyzer = build_analyzer()
        self._schema = build_schema()
        self._lock = threading.RLock()
        self._writer: tantivy.IndexWriter | None = None
        self._index: tantivy.Index | None = None
        self.problem: str | None = None  # why the index cannot be used; None when it can
        self._stamp: tuple[int, int, int] | None = None  # meta.json when `problem` was noted
        self._sizes: dict[str, int] = {}  # segment files as last mapped (see mapped_files.py)
        self._open(expected)

    @property
    def available(self) -> bool:
        """Whether searches reach the index (False: they find nothing, see `problem`)."""
        return self._index is not None and self.problem is None

    def _open(self, expected: bool) -> None:
        try:
            if not self.path.exists():
                if expected or not self.writable:
                    self._note(f"{self.path} is missing", log_it=False)
                    return
                self.path.mkdir(parents=True)
            elif not tantivy.Index.exists(str(self.path)) and (expected or not self.writable):
                self._note(f"{self.path / 'meta.json'} is missing", log_it=False)
                return
            self._attach()
        except TANTIVY_ERRORS as exc:
            self._note(f"{self.path} is unreadable: {exc}", log_it=False)

    def _attach(self) -> None:
        """Open the index on disk and search it once (which opens every segment's files), so
        damage shows here rather than in a later search; then create the writer."""
        index = self._index_at(self.path, reuse=True)
        probe = tantivy.Query.term_query(self._schema, "text", "probe")
        index.searcher().search(probe, 1, count=True)
        # One indexing thread: commits are small batches, and the cores go to the embedder.
        writer = self._new_writer(index) if self.writable else None
        self._index, self._writer, self.problem = index, writer, None
        self._sizes = segment_file_sizes(self.path)

    def _intact(self, index: tantivy.Index) -> bool:
        """False (and the index marked unusable) if a segment file shrank since it was mapped:
        touching the map again would kill the process with SIGBUS."""
        damage = shrunk_file(self.path, self._sizes)
        if damage is None:
            return True
        self._failed(index, "a size check", damage)
        return False

    def _reloaded(self, index: tantivy.Index) -> None:
        index.reload()
        self._sizes = segment_file_sizes(self.path)

    def _index_at(self, path: Path, *, reuse: bool) -> tantivy.Index:
        """Open (or create) the index at `path` with a manual reload policy. Tantivy's default
        policy has a thread watch meta.json and reload segments from their memory maps on its
        own; a segment file truncated meanwhile (damage, or a test damaging a closed store)
        then faults that thread with SIGBUS, killing the process. Manual reloads read segments
        only inside hymem's calls (`commit`, `rebuild`, `reload`), once the reload that
        tantivy-py's default reader handed to the watcher's thread on opening has run: the
        open waits for it (`reader_threads.py`), where a loaded machine could run it after a
        truncation."""
        before = watcher_threads()
        index = tantivy.Index(self._schema, path=str(path), reuse=reuse)
        index.config_reader(reload_policy="manual", num_warmers=0)
        index.register_tokenizer(ANALYZER_NAME, self._analyzer)
        started = time.monotonic()
        if settle(before, READER_SETTLE_S) == "timeout":
            waited = round(time.monotonic() - started, 1)
            log.warning("lexical.reload_unsettled", path=str(path), waited_s=waited)
        return index

    def _new_writer(self, index: tantivy.Index) -> tantivy.IndexWriter:
        """Tantivy's own writer lock is the second guard behind `writer.lock`: if that file
        was deleted under a live writer, a second process gets past it but not past this,
        and must stop with StoreLockedError (treating it as damage would wipe a live index)."""
        try:
            return index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        except ValueError as exc:
            if "lock" not in str(exc).lower():
                raise
            raise StoreLockedError(
                f"{self.path.parent} is being written by another process (its writer.lock "
                "file may have been deleted); close the other writer or open read_only=True"
            ) from exc

    def _meta_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path / "meta.json")
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _failed(self, index: tantivy.Index | None, what: str, exc: Exception | str) -> None:
        """A read of `index` failed: mark the index unusable, unless `index` was replaced
        meanwhile (a rebuild swapped in a fresh one, which is fine)."""
        with self._lock:
            if index is self._index:
                self._note(f"{self.path} failed {what}: {exc}")

    def _note(self, problem: str, *, log_it: bool = True) -> None:
        """Mark the index unusable; logged on the transition only, so once per damage."""
        with self._lock:
            if self.problem is None and log_it:
                log.warning("lexical.unavailable", path=str(self.path), problem=problem)
            self.problem = problem
            self._stamp = self._meta_stamp()
            if not self.writable:
                self._index = None  # reopened by `reload` once the index on disk changes

    def disable(self, reason: str) -> None:
        """Stop serving searches (the caller distrusts the index and reports why)."""
        self._note(reason, log_it=False)

    def _close_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            # Let background segment merges finish: dropping the writer mid-merge leaves
            # files being written after close() returns.
            writer.wait_merging_threads()
        except TANTIVY_ERRORS as exc:  # its threads died with the index; nothing to save
            log.warning("lexical.close_failed", path=str(self.path), error=str(exc))

    def close(self) -> None:
        with self._lock:
            self._close_writer()
            self._index = None

    # --- writes -------------------------------------------------------------------------------
    def upsert(self, docs: Iterable[LexDoc]) -> int:
        """Replace-or-insert by (level, user_id, id); uncommitted until `commit()`."""
        n = 0
        with self._writing() as writer:
            for doc in docs:
                writer.delete_documents_by_term("key", doc_key(doc.level, doc.user_id, doc.id))
                writer.add_document(to_document(doc))
                n += 1
        return n

    def delete(self, level: Level, user_id: str, ids: Iterable[str]) -> None:
        with self._writing() as writer:
            for id_ in ids:
                writer.delete_documents_by_term("key", doc_key(level, user_id, id_))

    def commit(self) -> None:
        with self._writing() as writer:
            writer.commit()
            assert self._index is not None
            self._reloaded(self._index)

    def rollback(self) -> None:
        """Discard the writes since the last commit (a replica's catch-up that failed midway
        must not leave them for the next commit to publish)."""
        with self._writing() as writer:
            writer.rollback()

    def rebuild(self, docs: Iterable[LexDoc], *, fresh: bool = False) -> int:
        """Drop everything and index `docs` from scratch (one commit). `fresh` (forced for a
        damaged index) builds in a new folder that then replaces the old one, never opened.

        It also makes scores depend on `docs` alone. Tantivy's BM25 statistics (documents,
        term frequencies, total tokens) still count a replaced or deleted document until a
        background merge drops it, and a merge over deletions re-estimates total tokens from
        quantised field lengths, so two indexes holding the same documents score differently
        when their write histories differ; rebuilt, they score alike (`hymem eval` rebuilds
        before it searches, for that reason)."""
        if fresh or self.problem is not None:
            return self._rebuild_aside(docs)
        with self._writing() as writer:
            writer.delete_all_documents()
            n = 0
            for doc in docs:
                writer.add_document(to_document(doc))
                n += 1
            writer.commit()
            assert self._index is not None
            self._reloaded(self._index)
        return n

    def _rebuild_aside(self, docs: Iterable[LexDoc]) -> int:
        """Index `docs` into `<path>.new`, then swap it in by renames: whatever damage the old
        folder held is discarded unread, and readers see the old index or the new, never an
        empty one. A crash midway leaves the folder missing or stale: rebuilt on next open."""
        self._require_writable()
        new, old = (self.path.with_name(self.path.name + end) for end in (".new", ".old"))
        with self._lock:
            self._close_writer()
            self._index = None
            try:
                wipe(new)
                wipe(old)
                new.mkdir(parents=True)
                index = self._index_at(new, reuse=False)
                writer = index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
                n = 0
                for doc in docs:
                    writer.add_document(to_document(doc))
                    n += 1
                writer.commit()
                writer.wait_merging_threads()
                if self.path.exists() or self.path.is_symlink():
                    os.replace(self.path, old)
                os.replace(new, self.path)
                wipe(old)
                self._attach()
            except TANTIVY_ERRORS as exc:
                self._note(f"{self.path} cannot be rebuilt: {exc}")
                raise StoreCorruptedError(
                    f"the lexical index at {self.path} cannot be rebuilt ({exc}); "
                    "free the folder and run `hymem reindex`"
                ) from exc
            except BaseException:
                # `docs` failed (its source's error, not Tantivy's) before the swap: the old
                # folder is untouched, so it is reopened as it was and the half-built one dropped
                wipe(new)
                self._open(expected=False)
                raise
        return n

    def _require_writable(self) -> None:
        if not self.writable:
            raise RuntimeError("lexical index opened without a writer")

    @contextmanager
    def _writing(self) -> Iterator[tantivy.IndexWriter]:
        """The writer, under the lock; a damaged index (known or found now) raises
        StoreCorruptedError, so the caller can rebuild instead of seeing tantivy's ValueError."""
        self._require_writable()
        with self._lock:
            if self._writer is None or self.problem is not None:
                raise StoreCorruptedError(self._damaged())
            try:
                yield self._writer
            except TANTIVY_ERRORS as exc:
                self._note(f"{self.path} failed a write: {exc}")
                raise StoreCorruptedError(self._damaged()) from exc

    def _damaged(self) -> str:
        return f"lexical index damaged: {self.problem}; run `hymem reindex`"

    # --- reads --------------------------------------------------------------------------------

    def search(
        self,
        user_id: str,
        text: str,
        k: int,
        *,
        level: Level = Level.SUMMARY,
        statuses: Sequence[str] | None = ("active",),
        time_range: tuple[datetime | None, datetime | None] | None = None,
        filters: Filter | None = None,
    ) -> list[tuple[str, float]]:
        index = self._index
        words = query_terms(text)
        if not self.available or not words or k <= 0 or (statuses is not None and not statuses):
            return []
        assert index is not None
        s = self._schema
        should = [(tantivy.Occur.Should, tantivy.Query.term_query(s, "text", t)) for t in words]
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.boolean_query(should)),
                *filter_clauses(s, user_id, level, statuses, time_range, filters),
            ]
        )
        if not self._intact(index):
            return []
        try:
            searcher = index.searcher()
            # Tantivy allocates its top-k heap up front: never more slots than documents exist
            limit = min(k, searcher.num_docs)
            if limit <= 0:
                return []
            result = searcher.search(query, limit, count=False)
            return [(searcher.doc(addr)["id"][0], float(score)) for score, addr in result.hits]
        except TANTIVY_ERRORS as exc:
            self._failed(index, "a search", exc)
            return []

    def reload(self) -> None:
        """Pick up commits made by another process (read-only stores). An unusable index is
        reopened once its meta.json has changed (a writer rebuilt it), else left alone."""
        index = self._index
        if self.problem is None:
            try:
                if index is not None and self._intact(index):
                    self._reloaded(index)
            except TANTIVY_ERRORS as exc:
                self._failed(index, "to reload", exc)
            return
        with self._lock:
            stamp = self._meta_stamp()
            if self.writable or self.problem is None or stamp in (None, self._stamp):
                return
            self._stamp = stamp
            try:
                self._attach()
            except TANTIVY_ERRORS:
                return  # still damaged: already reported
        log.info("lexical.available", path=str(self.path))

    def count(self, level: Level, status: str | None = None) -> int:
        index = self._index
        if not self.available or index is None or not self._intact(index):
            return 0
        s = self._schema
        q = tantivy.Query.term_query(s, "level", level.value)
        if status is not None:
            q = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, q),
                    (tantivy.Occur.Must, tantivy.Query.term_query(s, "status", status)),
                ]
            )
        try:
            found = index.searcher().search(q, 1, count=True)
            return int(found.count or 0)  # type: ignore[attr-defined]  # set by count=True; stub lacks it
        except TANTIVY_ERRORS as exc:
            self._failed(index, "a count", exc)
            return 0


def wipe(path: Path) -> None:
    """Remove an index folder (to rebuild it from scratch), or whatever took its name."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    else:
        return
    log.info("lexical.wiped", path=str(path))


__all__ = [
    "LEXICAL_SCHEMA_VERSION",
    "MAX_QUERY_TERMS",
    "TANTIVY_ERRORS",
    "LexDoc",
    "LexicalIndex",
    "query_terms",
    "wipe",
]
