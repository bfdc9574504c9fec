"""The English analyzer behind hymem's lexical search, shared by everything that compares words.

One definition of "the words of a text": the simple tokenizer, tokens longer than
`MAX_TOKEN_CHARS` dropped, lower-case, ASCII folding, English stop words, English (Snowball)
stemmer. The Tantivy index registers `build_analyzer()` for its `text` field, and `terms` gives
the same tokens in Python, so the in-memory store's BM25, the sleep merge guard and the real
index all see text identically.

Tantivy analyzers are native objects with no documented thread-safety, so each thread builds its
own (cheap) and `terms` caches results across threads.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import tantivy

ANALYZER_NAME = "hymem_en"
# Longer "words" are URLs, hashes or base64 blobs: indexing them only bloats the term dictionary.
MAX_TOKEN_CHARS = 40
# Summaries and query texts repeat a lot (the merge guard re-reads the same summaries); the
# cache keeps the analysed tokens of that many distinct texts.
TERMS_CACHE_SIZE = 65_536

_local = threading.local()


def build_analyzer() -> tantivy.TextAnalyzer:
    """A new analyzer, e.g. to register with a Tantivy index under `ANALYZER_NAME`."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _thread_analyzer() -> tantivy.TextAnalyzer:
    analyzer: tantivy.TextAnalyzer | None = getattr(_local, "analyzer", None)
    if analyzer is None:
        analyzer = _local.analyzer = build_analyzer()
    return analyzer


@lru_cache(maxsize=TERMS_CACHE_SIZE)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(_thread_analyzer().analyze(text))


def terms(text: str) -> list[str]:
    """Stemmed, stop-word-free tokens of `text` in order (duplicates kept), exactly as the
    lexical index sees them. A fresh list each call: callers may change it."""
    return list(_terms(text))


__all__ = ["ANALYZER_NAME", "MAX_TOKEN_CHARS", "build_analyzer", "terms"]
