"""Feedback ideas over the kept rank (issue 29, session 40): read the first hits, then search
again with what they say. Two kinds, both model-free:

* `prf_lex` (RM3-style lexical feedback): the top hits' most telling words (weighted by rank,
  not in the question, not stop words) added to a BM25 query of the question, its ranking fused
  as one more list;
* `bridge` (multi-hop bridge entities): names the top hits mention that the question does not
  (a multi-hop question's second hop is often about the entity the first hop found), searched
  with BM25 together with the question's content words, fused as one more list.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hymem.llm.extractive.text import STOPWORDS
from lab_core import Idea, _rrf_sum
from lab_ideas_late import _aspect_lists, _bm25_rank
from lab_pool import Pool, Question

PRF_IDEAS: dict[str, Idea] = {}
_WORD = re.compile(r"[a-z][a-z']+")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


def _kept(pool: Pool, q: Question) -> tuple[list[list[str]], dict[str, float]]:
    asp_ids, named, base, seg_ids = _aspect_lists(pool, q, 100, 200, 40)
    lists = [(asp_ids, 1.0), (named, 1.0), (base, 1.0), (seg_ids, 0.5)]
    return [ids for ids, _ in lists], _rrf_sum(*lists)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 2]


def prf_lex(
    pool: Pool, q: Question, top: int = 8, terms: int = 10, w: float = 0.5
) -> list[tuple[str, float]]:
    _, scores = _kept(pool, q)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    asked = set(_words(q.question))
    weight: Counter[str] = Counter()
    texts = pool.summary_text[q.user]
    for n, (sid, _) in enumerate(ranked[:top], start=1):
        words = _words(texts[sid])
        for word, tf in Counter(words).items():
            if word not in asked:
                weight[word] += (tf / max(len(words), 1)) / n
    expansion = [word for word, _ in weight.most_common(terms)]
    query = " ".join([*_words(q.question)] * 2 + expansion)  # the question's words count twice
    feedback = _bm25_rank(pool, q, query)
    for n, sid in enumerate(feedback, start=1):
        scores[sid] = scores.get(sid, 0.0) + w / (60 + n)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def bridge(
    pool: Pool, q: Question, top: int = 5, names: int = 3, w: float = 0.5
) -> list[tuple[str, float]]:
    _, scores = _kept(pool, q)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    asked = {x.lower() for x in _NAME.findall(q.question)}
    texts = pool.summary_text[q.user]
    found: Counter[str] = Counter()
    for n, (sid, _) in enumerate(ranked[:top], start=1):
        for name in set(_NAME.findall(texts[sid])):
            if name.lower() not in asked and name.lower() not in STOPWORDS:
                found[name] += 1.0 / n
    if not found:
        return ranked
    hop = " ".join([*(x for x, _ in found.most_common(names)), *_words(q.question)])
    second = _bm25_rank(pool, q, hop)
    for n, sid in enumerate(second, start=1):
        scores[sid] = scores.get(sid, 0.0) + w / (60 + n)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def density(pool: Pool, q: Question, a: float = 0.5) -> list[tuple[str, float]]:
    """Budget-aware order: the kept score over (tokens ** a), so a short summary of the same
    standing is read before a long one and more evidence fits the budget."""
    from lab_core import _tokens

    _, scores = _kept(pool, q)
    texts = pool.summary_text[q.user]
    dense = {i: v / max(_tokens(texts[i]), 1) ** a for i, v in scores.items()}
    return sorted(dense.items(), key=lambda kv: -kv[1])


PRF_IDEAS.update(
    {
        "density_0.25": lambda p, q: density(p, q, 0.25),
        "density_0.5": density,
        "density_1": lambda p, q: density(p, q, 1.0),
        "kept": lambda p, q: sorted(_kept(p, q)[1].items(), key=lambda kv: -kv[1]),
        "prf_lex": prf_lex,
        "prf_lex_w1": lambda p, q: prf_lex(p, q, w=1.0),
        "prf_lex_w0.25": lambda p, q: prf_lex(p, q, w=0.25),
        "prf_lex_top4_t5": lambda p, q: prf_lex(p, q, top=4, terms=5),
        "bridge": bridge,
        "bridge_w1": lambda p, q: bridge(p, q, w=1.0),
        "bridge_top10": lambda p, q: bridge(p, q, top=10, names=5),
    }
)


__all__ = ["PRF_IDEAS", "bridge", "density", "prf_lex"]
