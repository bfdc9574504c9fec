"""The lab's later re-ranking ideas: late interaction (MaxSim over MiniLM token vectors),
branch weights, anchors and aspects (kept: the engine's light rank), turn neighbours and BM25 of
the aspect. Registered in `LATE_IDEAS`; `lab_rerank.py` runs them with the rest."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_core import RRF, Idea, _dense_all, _rrf_sum, _seg_rank
from lab_features import aspects, token_vectors
from lab_pool import Pool, Question

LATE_IDEAS: dict[str, Idea] = {}

# --- late interaction (MaxSim over MiniLM token vectors) ----------------------------------
_TOK: dict | None = None


def _tokens_of(pool: Pool) -> dict:
    global _TOK
    if _TOK is None:
        _TOK = token_vectors(pool)
    return _TOK


def _unit(m: np.ndarray) -> np.ndarray:
    m = m.astype(np.float32)
    return m / (np.linalg.norm(m, axis=1, keepdims=True) + 1e-9)


def maxsim_scores(pool: Pool, q: Question, ids: list[str]) -> dict[str, float]:
    tok = _tokens_of(pool)
    qi = pool.questions.index(q) if not hasattr(q, "_i") else q._i
    qt = _unit(tok["__q__"][qi])
    out = {}
    for sid in ids:
        d = _unit(tok[q.user][sid])
        out[sid] = float((qt @ d.T).max(axis=1).mean())
    return out


def maxsim(
    pool: Pool, q: Question, depth: int = 100, w: float = 1.0, full: bool = False
) -> list[tuple[str, float]]:
    """Candidates (hybrid top `depth`, or every summary) re-ranked by MaxSim, fused by RRF
    with the hybrid ranking (w) and the segment ranking (0.5)."""
    base = [s.id for s in q.summaries[:depth]]
    ids = list(pool.summary_text[q.user]) if full else base
    ms = maxsim_scores(pool, q, ids)
    ms_ids = [i for i, _ in sorted(ms.items(), key=lambda kv: -kv[1])]
    seg = _seg_rank(q)
    seg_of = {s.id: s.segment for s in q.summaries}
    seg_ids = sorted((i for i in base if seg.get(seg_of[i])), key=lambda i: seg[seg_of[i]])
    scores = _rrf_sum((base, w), (ms_ids, 1.0), (seg_ids, 0.5))
    return sorted(scores.items(), key=lambda kv: -kv[1])


LATE_IDEAS.update(
    {
        "maxsim_only": lambda p, q: maxsim(p, q, w=0.0),
        "maxsim_fused": maxsim,
        "maxsim_full_fused": lambda p, q: maxsim(p, q, full=True),
    }
)


def weighted(
    pool: Pool, q: Question, wd: float = 1.0, wl: float = 1.0, ws: float = 0.0, k: int = RRF
) -> list[tuple[str, float]]:
    """RRF with per-branch weights over the pool's own branch ranks (dense, BM25, segment)."""
    seg = _seg_rank(q)
    scores = {}
    for s in q.summaries:
        sc = 0.0
        if s.dense_rank:
            sc += wd / (k + s.dense_rank)
        if s.lexical_rank:
            sc += wl / (k + s.lexical_rank)
        g = seg.get(s.segment)
        if g:
            sc += ws / (k + g)
        scores[s.id] = sc
    return sorted(scores.items(), key=lambda kv: -kv[1])


for _wd, _wl, _ws, _k in [
    (1, 0.5, 0, 60),
    (0.5, 1, 0, 60),
    (1, 1, 0, 20),
    (1, 1, 0.5, 20),
    (1, 1.5, 0.5, 60),
    (1.5, 1, 0.5, 60),
    (1, 1, 0.5, 120),
]:
    LATE_IDEAS[f"w_d{_wd}_l{_wl}_s{_ws}_k{_k}"] = lambda p, q, a=_wd, b=_wl, c=_ws, d=_k: weighted(
        p, q, a, b, c, d
    )


# --- anchors and aspects: a question's frequent names filter, the rest ranks ---------------
_ASP: dict | None = None


def _aspect(pool: Pool) -> dict:
    global _ASP
    if _ASP is None:
        _ASP = aspects(pool)
    return _ASP


def _aspect_lists(
    pool: Pool, q: Question, base_n: int = 100, asp_n: int = 300, seg_n: int = 40
) -> tuple[list[str], list[str], list[str], list[str]]:
    """(aspect ranking, its anchor-named part, hybrid ranking, segment-ranked summaries),
    each as deep as asked. Anchors by the engine's rule (`lab_features.aspects`)."""
    a = _aspect(pool)
    qi = _qindex(pool, q)
    anchors = [x.lower() for x in a["anchors"][qi]]
    dense = _dense_all(pool, q, a["vec"][qi])
    asp_ids = [i for i, _ in sorted(dense.items(), key=lambda kv: -kv[1])][:asp_n]
    texts = pool.summary_text[q.user]
    named = [i for i in asp_ids if anchors and any(x in texts[i].lower() for x in anchors)]
    base = [s.id for s in q.summaries[:base_n]]
    seg = {g.id: n for n, g in enumerate(q.segments[:seg_n], start=1)}
    seg_of = {s.id: s.segment for s in q.summaries}
    seg_ids = sorted((i for i in base if seg.get(seg_of[i])), key=lambda i: seg[seg_of[i]])
    return asp_ids, named, base, seg_ids


def aspect(
    pool: Pool, q: Question, bonus: float = 1.0, fuse: bool = True, ms: bool = False
) -> list[tuple[str, float]]:
    """Dense over every summary with the question's anchor names taken out of the query;
    summaries naming an anchor get `bonus` RRF weight; fused with the hybrid ranking and the
    segment rank (`fuse`), and with MaxSim over every summary (`ms`)."""
    asp_ids, named, base, seg_ids = _aspect_lists(pool, q)
    parts = [(asp_ids, 1.0), (named, bonus)]
    if fuse:
        parts += [(base, 1.0), (seg_ids, 0.5)]
    if ms:
        m = maxsim_scores(pool, q, list(pool.summary_text[q.user]))
        parts.append(([i for i, _ in sorted(m.items(), key=lambda kv: -kv[1])], 1.0))
    scores = _rrf_sum(*parts)
    return sorted(scores.items(), key=lambda kv: -kv[1])


_QI: dict[int, int] = {}


def _qindex(pool: Pool, q: Question) -> int:
    if not _QI:
        _QI.update({id(x): n for n, x in enumerate(pool.questions)})
    return _QI[id(q)]


LATE_IDEAS.update(
    {
        "aspect_only": lambda p, q: aspect(p, q, 0.0, False),
        "aspect_named": lambda p, q: aspect(p, q, 1.0, False),
        "aspect_fused": aspect,
        "aspect_fused_ms": lambda p, q: aspect(p, q, 1.0, True, True),
    }
)


def _turn_pos(t: str) -> tuple[str, int] | None:
    m = re.search(r"D(\d+):(\d+)$", t)
    return (m.group(1), int(m.group(2))) if m else None


def neighbours(
    pool: Pool, q: Question, ranked: list[tuple[str, float]], top: int = 5, w: float = 0.5
) -> list[tuple[str, float]]:
    """Summaries of turns next to (+-1) a top hit's turn join with weight w (a question's
    answer is often the reply to the line it matched)."""
    turns_of = pool.summary_turns[q.user]
    near: set[tuple[str, int]] = set()
    for sid, _ in ranked[:top]:
        for t in turns_of.get(sid, []):
            p = _turn_pos(t)
            if p:
                near |= {(p[0], p[1] - 1), (p[0], p[1] + 1)}
    base = [i for i, _ in ranked]
    extra = [s for s, ts in turns_of.items() if any(_turn_pos(t) in near for t in ts)]
    extra.sort(key=lambda s: base.index(s) if s in base else 10**6)
    scores = _rrf_sum((base, 1.0), (extra, w))
    return sorted(scores.items(), key=lambda kv: -kv[1])


LATE_IDEAS.update(
    {
        "aspect_b0.5": lambda p, q: aspect(p, q, 0.5),
        "aspect_b2": lambda p, q: aspect(p, q, 2.0),
        "aspect_nb": lambda p, q: neighbours(p, q, aspect(p, q)),
        "aspect_nb_w1": lambda p, q: neighbours(p, q, aspect(p, q), w=1.0),
        "aspect_nb_top10": lambda p, q: neighbours(p, q, aspect(p, q), top=10, w=0.3),
    }
)


def aspect_cut(
    pool: Pool, q: Question, base_n: int = 50, asp_n: int = 100, seg_n: int = 40
) -> list[tuple[str, float]]:
    """`aspect` with shallower lists (what the engine can afford per question)."""
    asp_ids, named, base, seg_ids = _aspect_lists(pool, q, base_n, asp_n, seg_n)
    scores = _rrf_sum((asp_ids, 1.0), (named, 1.0), (base, 1.0), (seg_ids, 0.5))
    return sorted(scores.items(), key=lambda kv: -kv[1])


LATE_IDEAS.update(
    {
        "aspect_50_100_40": aspect_cut,
        "aspect_30_60_20": lambda p, q: aspect_cut(p, q, 30, 60, 20),
        "aspect_40_80_40": lambda p, q: aspect_cut(p, q, 40, 80, 40),
        "aspect_100_300_0": lambda p, q: aspect_cut(p, q, 100, 300, 0),
    }
)


LATE_IDEAS.update(
    {
        "aspect_100_150_40": lambda p, q: aspect_cut(p, q, 100, 150, 40),
        "aspect_100_200_40": lambda p, q: aspect_cut(p, q, 100, 200, 40),
        "aspect_100_300_40": lambda p, q: aspect_cut(p, q, 100, 300, 40),
        "aspect_60_200_40": lambda p, q: aspect_cut(p, q, 60, 200, 40),
    }
)


# --- lexical aspect: BM25 of the question without its anchors -----------------------------
_BM25: dict[str, tuple[list[str], object]] = {}


def _bm25_rank(pool: Pool, q: Question, text: str, n: int = 200) -> list[str]:
    from rank_bm25 import BM25Okapi

    if q.user not in _BM25:
        ids = list(pool.summary_text[q.user])
        docs = [re.findall(r"\w+", pool.summary_text[q.user][i].lower()) for i in ids]
        _BM25[q.user] = (ids, BM25Okapi(docs))
    ids, bm = _BM25[q.user]
    scores = bm.get_scores(re.findall(r"\w+", text.lower()))  # type: ignore[attr-defined]
    order = np.argsort(-scores)[:n]
    return [ids[i] for i in order if scores[i] > 0]


def aspect_lex(
    pool: Pool, q: Question, w: float = 1.0, named_hybrid: bool = False
) -> list[tuple[str, float]]:
    """The kept rank plus BM25 of the aspect (and, optionally, the anchor-named part of the
    hybrid ranking as one more list)."""
    asp_ids, named, base, seg_ids = _aspect_lists(pool, q, 100, 200, 40)
    a = _aspect(pool)
    qi = _qindex(pool, q)
    parts = [(asp_ids, 1.0), (named, 1.0), (base, 1.0), (seg_ids, 0.5)]
    if a["anchors"][qi]:
        parts.append((_bm25_rank(pool, q, a["aspects"][qi]), w))
    if named_hybrid and a["anchors"][qi]:
        names = [x.lower() for x in a["anchors"][qi]]
        texts = pool.summary_text[q.user]
        parts.append(([i for i in base if any(x in texts[i].lower() for x in names)], 1.0))
    scores = _rrf_sum(*parts)
    return sorted(scores.items(), key=lambda kv: -kv[1])


LATE_IDEAS.update(
    {
        "aspect_lex": aspect_lex,
        "aspect_lex_w0.5": lambda p, q: aspect_lex(p, q, 0.5),
        "aspect_named_hybrid": lambda p, q: aspect_lex(p, q, 0.0, True),
    }
)


__all__ = ["LATE_IDEAS"]
