"""Scoring for the extractive backend: lexical coverage, embedding similarity, their blend,
and the SQuAD-style answer normalisation the judge uses (the one LoCoMo's F1 also uses).

The constants are set from first principles, not fitted to any benchmark's answers:

* `W_DENSE`/`W_LEXICAL` weigh embedding cosine and lexical coverage equally: cosine catches
  paraphrase ("counselor" ~ "therapist"), coverage catches the names and rare terms a small
  embedding model blurs; neither alone is trustworthy.
* `COMPLETE_MIN_COVERAGE` = 0.6: more than half of the question's content words (names,
  objects, the verb) must appear in the supporting sentence before we claim it suffices.
* `COMPLETE_MIN_COSINE` = 0.3: all-MiniLM-L6-v2 scores unrelated sentence pairs around 0-0.2
  and topical matches 0.4 and up; 0.3 separates "about something else" from "about this".
* `SELECT_MARGIN` = 0.1 of the blended score keeps candidates nearly as good as the best one.

`CachedEmbedder` keeps `MemoryConfig.extractive_cache_items` vectors (default
`DEFAULT_CACHE_ITEMS`): a memory/speed trade-off that never changes a score.
"""

from __future__ import annotations

import math
import re
import string
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence

import numpy as np
from hymem.embed.embedders import Embedder
from hymem.llm.extractive.text import STOPWORDS, content_stems, stem, words

W_DENSE = 0.5
W_LEXICAL = 0.5
COMPLETE_MIN_COVERAGE = 0.6
COMPLETE_MIN_COSINE = 0.3
SELECT_MARGIN = 0.1
DEFAULT_CACHE_ITEMS = 20_000  # ~30 MB of 384-d float32 vectors: a few conversations' worth


class CachedEmbedder:
    """Embeds texts through `embedder`, remembering recent vectors (bounded LRU, thread-safe).

    The read path shows the same summaries and segments to several roles and rounds; caching
    keeps the no-model backend from re-embedding them on every call."""

    def __init__(self, embedder: Embedder, max_items: int = DEFAULT_CACHE_ITEMS) -> None:
        self.embedder = embedder
        self._max = max_items
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = np.asarray(self.embedder.embed(missing), dtype=np.float32)
            with self._lock:
                for text, vec in zip(missing, vectors, strict=True):
                    self._cache[text] = vec
                    self._cache.move_to_end(text)
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
            fresh = dict(zip(missing, vectors, strict=True))
        else:
            fresh = {}
        with self._lock:
            rows = [fresh[t] if t in fresh else self._cache[t] for t in texts]
        return np.vstack(rows)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def cosines(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Cosine of `query` against each text (rows are unit length)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        mat = self.embed([query, *texts])
        cosines: np.ndarray = mat[1:] @ mat[0]
        return cosines


def _covered(term: str, have: set[str], short_names: frozenset[str]) -> bool:
    """A term is covered by its stem, or -- for a short name like "Mel" -- by a longer name
    it abbreviates ("Melanie")."""
    if term in have:
        return True
    return term in short_names and any(h.startswith(term) and h != term for h in have)


def coverage(
    terms: Sequence[str],
    text: str,
    extra: Sequence[str] = (),
    weights: dict[str, float] | None = None,
    short_names: frozenset[str] = frozenset(),
) -> float:
    """Share of the question's content stems that `text` (plus `extra` words, e.g. the
    speaker's name) mentions, optionally weighted per term; 0 when there are no terms."""
    if not terms:
        return 0.0
    have = set(content_stems(text)) | {stem(w) for w in extra}
    w = weights or {}
    total = sum(w.get(t, 1.0) for t in terms)
    hit = sum(w.get(t, 1.0) for t in terms if _covered(t, have, short_names))
    return hit / total if total else 0.0


def term_weights(terms: Sequence[str], texts: Sequence[str]) -> dict[str, float]:
    """Inverse document frequency of each question term among the candidates: a name that
    every candidate mentions tells them apart less than the one rare word only a few share."""
    n = len(texts)
    stems = [set(content_stems(t)) for t in texts]
    return {t: math.log(1.0 + (n + 1) / (1 + sum(1 for s in stems if t in s))) for t in terms}


def missing_terms(terms: Sequence[str], text: str, extra: Sequence[str] = ()) -> list[str]:
    have = set(content_stems(text)) | {stem(w) for w in extra}
    return [t for t in terms if t not in have]


def blend(cosine: float, cover: float) -> float:
    return W_DENSE * float(cosine) + W_LEXICAL * float(cover)


def rank(scores: Sequence[float]) -> list[int]:
    """Indices by descending score; ties keep the given order (deterministic)."""
    return sorted(range(len(scores)), key=lambda i: (-round(float(scores[i]), 9), i))


def select_within_margin(scores: Sequence[float], margin: float = SELECT_MARGIN) -> list[int]:
    """Indices (best first) whose score is within `margin` of the best: at least one, at most
    half the batch rounded up, so selection always narrows the candidates."""
    if not scores:
        return []
    order = rank(scores)
    best = float(scores[order[0]])
    cap = max(1, (len(scores) + 1) // 2)
    return [i for i in order if float(scores[i]) >= best - margin][:cap]


def token_set(text: str) -> set[str]:
    return {w.lower() for w in words(text)}


def jaccard(a: str, b: str) -> float:
    sa, sb = token_set(a), token_set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


_PUNCT = re.compile(f"[{re.escape(string.punctuation)}‘’“”]")


def normalise_answer(text: str) -> str:
    """SQuAD-style normalisation (LoCoMo's F1 uses it too): lowercase, drop punctuation,
    articles and 'and', squash whitespace."""
    text = _PUNCT.sub(" ", str(text).lower())
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


def normalised_tokens(text: str) -> list[str]:
    return [stem(t) for t in normalise_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 over stemmed, normalised tokens (SQuAD's and LoCoMo's QA metric); the
    extractive judge's fallback and its answer deduplication."""
    pred, ref = normalised_tokens(prediction), normalised_tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def is_content_word(word: str) -> bool:
    return word.lower() not in STOPWORDS
