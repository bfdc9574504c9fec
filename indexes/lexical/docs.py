"""What the Tantivy index holds and how it is asked: schema, documents, queries, filters.

Queries are never parsed: user text goes through the same analyzer as the indexed text
(`indexes/lexical/analysis.py`) and each resulting token becomes a `term_query` on `text`. Quotes,
colons, `AND`/`OR`, lone `-` or emoji therefore cannot raise or reach other fields; text with no
content words simply matches nothing.
Filters (user, level, status, time, metadata) are exact-match `raw` fields and integer ranges
in `Must` clauses with a constant zero score, so reported scores are pure BM25. Times are stored and
compared as microseconds since 1970 UTC (`hymem.core.time.micros`), so an aware bound and the
equivalent naive-UTC bound select the same documents.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import tantivy
from hymem.core.filters import Filter
from hymem.core.time import micros
from hymem.core.types import Level
from hymem.indexes.filter_compile import to_tantivy
from hymem.indexes.lexical.analysis import ANALYZER_NAME, terms

# 2: documents are keyed by (level, user_id, id), since ids are unique per user only; 3: a
# summary's document holds its context too (`hymem.indexes.keys`); 4: the `meta` field of
# metadata tokens (`hymem.indexes.filter_compile`). An index of an older version is rebuilt on
# open (its sync record names that version).
LEXICAL_SCHEMA_VERSION = 4
# A 10 kB query keeps its first 256 distinct content words: past that, more Should clauses
# cost time without changing which documents rank first.
MAX_QUERY_TERMS = 256
# Open ends of the integer time ranges (microseconds, ~146,000 years either side of 1970).
_FAR = 2**62


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("key", stored=False, tokenizer_name="raw")  # doc_key(), for deletes
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("user_id", tokenizer_name="raw")
    sb.add_text_field("level", tokenizer_name="raw")
    sb.add_text_field("status", tokenizer_name="raw")
    sb.add_text_field("text", tokenizer_name=ANALYZER_NAME, index_option="freq")
    sb.add_integer_field("t_start", indexed=True, fast=True)
    sb.add_integer_field("t_end", indexed=True, fast=True)
    sb.add_text_field("meta", stored=False, tokenizer_name="raw")  # metadata.lexical_tokens
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
    meta: tuple[str, ...] = ()  # `metadata.lexical_tokens` of the record's metadata


def to_document(doc: LexDoc) -> tantivy.Document:
    """The Tantivy document of `doc`; an instant (one time bound) is stored as [t, t]."""
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
    if doc.meta:
        fields["meta"] = list(doc.meta)
    return tantivy.Document(**fields)


def filter_clauses(
    s: tantivy.Schema,
    user_id: str,
    level: Level,
    statuses: Sequence[str] | None,
    time_range: tuple[datetime | None, datetime | None] | None,
    filters: Filter | None = None,
) -> list[tuple[tantivy.Occur, tantivy.Query]]:
    """Scoreless `Must` clauses keeping one user's documents of one level (and statuses, a
    time overlap, a metadata filter), applied inside the search before the top-k cut."""
    must = [
        tantivy.Query.term_query(s, "user_id", user_id),
        tantivy.Query.term_query(s, "level", level.value),
    ]
    if filters is not None:
        must.append(to_tantivy(s, filters))
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


__all__ = [
    "LEXICAL_SCHEMA_VERSION",
    "MAX_QUERY_TERMS",
    "LexDoc",
    "build_schema",
    "doc_key",
    "filter_clauses",
    "query_terms",
    "to_document",
]
