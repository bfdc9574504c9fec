"""BM25 over summaries and segments with Tantivy: a derived index, always rebuildable from LanceDB.

Queries are never parsed: user text goes through the same analyzer as the indexed text
(`indexes/analysis.py`) and each resulting token becomes a `term_query` on `text`. Quotes,
colons, `AND`/`OR`, lone `-` or emoji therefore cannot raise or reach other fields; text with no
content words simply matches nothing.
Filters (user, level, status, time) are exact-match `raw` fields and integer ranges in `Must`
clauses with a constant zero score, so reported scores are pure BM25. Times are stored and
compared as microseconds since 1970 UTC (`hymem.time.micros`), so an aware bound and the
equivalent naive-UTC bound select the same documents.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import tantivy
from hymem.indexes.analysis import ANALYZER_NAME, build_analyzer, terms
from hymem.logging import get_logger
from hymem.time import micros
from hymem.types import Level

log = get_logger("hymem.indexes.lexical")

# 2: documents are keyed by (level, user_id, id), since ids are unique per user only; a
# version-1 index is rebuilt on open (its sync record names version 1).
LEXICAL_SCHEMA_VERSION = 2
# A 10 kB query keeps its first 256 distinct content words: past that, more Should clauses
# cost time without changing which documents rank first.
MAX_QUERY_TERMS = 256
# Tantivy splits its writer heap between indexing threads; 32 MB is enough for one thread and
# hymem's batched commits, and keeps a writer's memory small beside the embedder.
WRITER_HEAP_BYTES = 32_000_000
# Open ends of the integer time ranges (microseconds, ~146,000 years either side of 1970).
_FAR = 2**62


def _build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("key", stored=False, tokenizer_name="raw")  # doc_key(), for deletes
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("user_id", tokenizer_name="raw")
    sb.add_text_field("level", tokenizer_name="raw")
    sb.add_text_field("status", tokenizer_name="raw")
    sb.add_text_field("text", tokenizer_name=ANALYZER_NAME, index_option="freq")
    sb.add_integer_field("t_start", indexed=True, fast=True)
    sb.add_integer_field("t_end", indexed=True, fast=True)
    return sb.build()


def doc_key(level: Level, user_id: str, id_: str) -> str:
    """The unique key of one document: a JSON array, so no user id or record id can make two
    different documents collide (whatever characters they hold)."""
    return json.dumps([level.value, user_id, id_], ensure_ascii=False)


def query_terms(text: str) -> list[str]:
    """The analysed, de-duplicated terms of a query, in first-seen order, capped."""
    return list(dict.fromkeys(terms(text)))[:MAX_QUERY_TERMS]


@dataclass(frozen=True, slots=True)
class LexDoc:
    id: str
    user_id: str
    level: Level
    text: str
    status: str = "active"
    time_start: datetime | None = None
    time_end: datetime | None = None


class LexicalIndex:
    """One Tantivy index; the writer (if any) is created once and guarded by a lock."""

    def __init__(self, path: Path, *, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self._analyzer = build_analyzer()
        self._schema = _build_schema()
        self._lock = threading.RLock()
        self._writer: tantivy.IndexWriter | None = None
        self._index: tantivy.Index | None = None
        self._open()

    def _open(self) -> None:
        if not self.path.exists():
            if not self.writable:
                return  # a read-only store without a lexical index: lexical search finds nothing
            self.path.mkdir(parents=True)
        elif not tantivy.Index.exists(str(self.path)) and not self.writable:
            return
        self._index = tantivy.Index(self._schema, path=str(self.path), reuse=True)
        self._index.register_tokenizer(ANALYZER_NAME, self._analyzer)
        if self.writable:
            # One indexing thread: commits are small batches, and the cores go to the embedder.
            self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                # Let background segment merges finish: dropping the writer mid-merge leaves
                # files being written after close() returns.
                self._writer.wait_merging_threads()
            self._writer = None
            self._index = None

    # --- writes -------------------------------------------------------------------------------
    def _document(self, doc: LexDoc) -> tantivy.Document:
        fields: dict[str, object] = {
            "key": doc_key(doc.level, doc.user_id, doc.id),
            "id": doc.id,
            "user_id": doc.user_id,
            "level": doc.level.value,
            "status": doc.status,
            "text": doc.text,
        }
        start = doc.time_start or doc.time_end
        end = doc.time_end or doc.time_start
        if start is not None and end is not None:
            fields["t_start"] = micros(start)
            fields["t_end"] = micros(end)
        return tantivy.Document(**fields)

    def upsert(self, docs: Iterable[LexDoc]) -> int:
        """Replace-or-insert by (level, user_id, id); uncommitted until `commit()`."""
        writer = self._require_writer()
        n = 0
        with self._lock:
            for doc in docs:
                writer.delete_documents_by_term("key", doc_key(doc.level, doc.user_id, doc.id))
                writer.add_document(self._document(doc))
                n += 1
        return n

    def delete(self, level: Level, user_id: str, ids: Iterable[str]) -> None:
        writer = self._require_writer()
        with self._lock:
            for id_ in ids:
                writer.delete_documents_by_term("key", doc_key(level, user_id, id_))

    def commit(self) -> None:
        writer = self._require_writer()
        with self._lock:
            writer.commit()
            assert self._index is not None
            self._index.reload()

    def rebuild(self, docs: Iterable[LexDoc]) -> int:
        """Drop everything and index `docs` from scratch (one commit)."""
        writer = self._require_writer()
        with self._lock:
            writer.delete_all_documents()
            n = 0
            for doc in docs:
                writer.add_document(self._document(doc))
                n += 1
            writer.commit()
            assert self._index is not None
            self._index.reload()
        return n

    def _require_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise RuntimeError("lexical index opened without a writer")
        return self._writer

    # --- reads --------------------------------------------------------------------------------

    def _filters(
        self,
        user_id: str,
        level: Level,
        statuses: Sequence[str] | None,
        time_range: tuple[datetime | None, datetime | None] | None,
    ) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        s = self._schema
        must = [
            tantivy.Query.term_query(s, "user_id", user_id),
            tantivy.Query.term_query(s, "level", level.value),
        ]
        if statuses is not None and level is Level.SUMMARY:
            must.append(tantivy.Query.term_set_query(s, "status", list(statuses)))
        if time_range is not None:
            since, until = time_range
            if since is not None:
                must.append(
                    tantivy.Query.range_query(
                        s,
                        "t_end",
                        tantivy.FieldType.Integer,
                        lower_bound=micros(since),
                        upper_bound=_FAR,
                    )
                )
            if until is not None:
                must.append(
                    tantivy.Query.range_query(
                        s,
                        "t_start",
                        tantivy.FieldType.Integer,
                        lower_bound=-_FAR,
                        upper_bound=micros(until),
                    )
                )
        return [(tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q in must]

    def search(
        self,
        user_id: str,
        text: str,
        k: int,
        *,
        level: Level = Level.SUMMARY,
        statuses: Sequence[str] | None = ("active",),
        time_range: tuple[datetime | None, datetime | None] | None = None,
    ) -> list[tuple[str, float]]:
        index = self._index
        words = query_terms(text)
        if index is None or not words or k <= 0 or (statuses is not None and not statuses):
            return []
        s = self._schema
        should = [(tantivy.Occur.Should, tantivy.Query.term_query(s, "text", t)) for t in words]
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.boolean_query(should)),
                *self._filters(user_id, level, statuses, time_range),
            ]
        )
        searcher = index.searcher()
        # Tantivy allocates its top-k heap up front: never more slots than documents exist
        limit = min(k, searcher.num_docs)
        if limit <= 0:
            return []
        result = searcher.search(query, limit, count=False)
        return [(searcher.doc(addr)["id"][0], float(score)) for score, addr in result.hits]

    def reload(self) -> None:
        """Pick up commits made by another process (read-only stores)."""
        if self._index is not None:
            self._index.reload()

    def count(self, level: Level, status: str | None = None) -> int:
        if self._index is None:
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
        return int(self._index.searcher().search(q, 1, count=True).count or 0)

    def num_docs(self) -> int:
        return 0 if self._index is None else int(self._index.searcher().num_docs)


def wipe(path: Path) -> None:
    """Remove an index folder (used when its schema version is unknown)."""
    if path.exists():
        shutil.rmtree(path)
        log.warning("lexical.wiped", path=str(path))


__all__ = [
    "LEXICAL_SCHEMA_VERSION",
    "MAX_QUERY_TERMS",
    "LexDoc",
    "LexicalIndex",
    "query_terms",
    "wipe",
]
