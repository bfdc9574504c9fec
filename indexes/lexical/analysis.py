"""The English analyzer behind hymem's lexical search, shared by everything that compares words.

One definition of "the words of a text": the simple tokenizer, tokens longer than
`MAX_TOKEN_CHARS` dropped, lower-case, ASCII folding, English stop words, English (Snowball)
stemmer. The Tantivy index registers `build_analyzer()` for its `text` field, and `terms` gives
the same tokens in Python, so the in-memory store's BM25, the sleep merge guard and the real
index all see text identically.

Tantivy's English stop list is short (Lucene's 33 words: BM25's idf discounts the rest), so
`content_terms` also drops the English function words: what a rewrite may drop without dropping
a fact (the sleep merge guard compares texts with it).

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

# Pronouns, determiners, auxiliaries and modals, prepositions, conjunctions, negations and the
# fragments the simple tokenizer cuts from contractions ("don't" -> "don", "t"): Snowball's
# English stop list plus could/would/also. Negations are here because an update that replaces
# "does not eat meat" with "eats meat again" is a legitimate change, not a lost fact.
FUNCTION_WORDS = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    whose this that these those am is are was were be been being have has had having do does
    did doing done a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on off
    over under again further then once here there when where why how all any both each few
    more most other some such no nor not only own same so than too very can will just should
    now also could would s t don d ll m re ve
"""

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


@lru_cache(maxsize=1)
def _function_terms() -> frozenset[str]:
    return frozenset(_terms(FUNCTION_WORDS))


def content_terms(text: str) -> list[str]:
    """`terms` without function words (`FUNCTION_WORDS`, stemmed alike), in order, without
    duplicates: the words a text's facts are made of."""
    drop = _function_terms()
    return [t for t in dict.fromkeys(_terms(text)) if t not in drop]


__all__ = [
    "ANALYZER_NAME",
    "FUNCTION_WORDS",
    "MAX_TOKEN_CHARS",
    "build_analyzer",
    "content_terms",
    "terms",
]
