"""BM25 over summaries and segments with Tantivy: a derived index, always rebuildable from LanceDB.

Queries are never parsed: user text goes through the same analyzer as the indexed text (simple
tokenizer, lower-case, ASCII folding, English stop words, English stemmer) and each resulting
token becomes a `term_query` on `text`. Quotes, colons, `AND`/`OR`, lone `-` or emoji therefore
cannot raise or reach other fields; text with no content words simply matches nothing.
Filters (user, level, status, time) are exact-match `raw` fields and integer ranges in `Must`
clauses with a constant zero score, so reported scores are pure BM25.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import tantivy
from hymem.logging import get_logger
from hymem.types import Level

log = get_logger("hymem.indexes.lexical")

LEXICAL_SCHEMA_VERSION = 1
ANALYZER = "hymem_en"
MAX_QUERY_TERMS = 256  # a 10 kB query keeps its first 256 distinct content words
_EPOCH = datetime(1970, 1, 1)
_WRITER_HEAP = 32_000_000


def build_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("key", stored=False, tokenizer_name="raw")  # "<level>:<id>", for deletes
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("user_id", tokenizer_name="raw")
    sb.add_text_field("level", tokenizer_name="raw")
    sb.add_text_field("status", tokenizer_name="raw")
    sb.add_text_field("text", tokenizer_name=ANALYZER, index_option="freq")
    sb.add_integer_field("t_start", indexed=True, fast=True)
    sb.add_integer_field("t_end", indexed=True, fast=True)
    return sb.build()


def micros(value: datetime) -> int:
    """Naive datetimes as integer microseconds since 1970 (exact, unlike float timestamps)."""
    delta = value.replace(tzinfo=None) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


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
        self._index.register_tokenizer(ANALYZER, self._analyzer)
        if self.writable:
            self._writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=1)

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
            "key": f"{doc.level.value}:{doc.id}",
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
        """Replace-or-insert by (level, id); uncommitted until `commit()`."""
        writer = self._require_writer()
        n = 0
        with self._lock:
            for doc in docs:
                writer.delete_documents_by_term("key", f"{doc.level.value}:{doc.id}")
                writer.add_document(self._document(doc))
                n += 1
        return n

    def delete(self, level: Level, ids: Iterable[str]) -> None:
        writer = self._require_writer()
        with self._lock:
            for id_ in ids:
                writer.delete_documents_by_term("key", f"{level.value}:{id_}")

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
    def terms(self, text: str) -> list[str]:
        """The analysed, de-duplicated terms of `text`, in first-seen order."""
        return list(dict.fromkeys(self._analyzer.analyze(text)))[:MAX_QUERY_TERMS]

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
                        upper_bound=2**62,
                    )
                )
            if until is not None:
                must.append(
                    tantivy.Query.range_query(
                        s,
                        "t_start",
                        tantivy.FieldType.Integer,
                        lower_bound=-(2**62),
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
        terms = self.terms(text)
        if index is None or not terms or k <= 0 or (statuses is not None and not statuses):
            return []
        s = self._schema
        should = [(tantivy.Occur.Should, tantivy.Query.term_query(s, "text", t)) for t in terms]
        query = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.boolean_query(should)),
                *self._filters(user_id, level, statuses, time_range),
            ]
        )
        searcher = index.searcher()
        result = searcher.search(query, k, count=False)
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


__all__ = ["LEXICAL_SCHEMA_VERSION", "LexDoc", "LexicalIndex", "build_analyzer", "micros", "wipe"]
