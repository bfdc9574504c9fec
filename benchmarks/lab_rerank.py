"""Re-ranking ideas over the lab's cached pools (`lab_pool.py`), each a pure function from a
question's pool to the summaries the light path would read, scored on honest recall and tokens.

    python benchmarks/lab_rerank.py                  # every idea, LoCoMo dev
    python benchmarks/lab_rerank.py --idea rank_fill --idea seg_rrf

An idea that earns its place here is then built into the engine and measured again through
`retrieval_lab.py` (the real `Memory.context`). Every idea tried stays listed in `IDEAS`, kept
or not, so the ablation table in RESULTS.md can be regenerated.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_features import aspects, token_vectors
from lab_pool import Pool, Question, load
from rich.console import Console
from rich.table import Table

BUDGET = 400
RRF = 60
CATS = ("single_hop", "multi_hop", "temporal", "open_domain")

Idea = Callable[[Pool, Question], list[tuple[str, float]]]  # summary id, score; best first


def fill(pool: Pool, q: Question, ranked: list[tuple[str, float]], budget: int) -> list[str]:
    """Walk the ranking, skipping a summary whose source turns are all already read, until
    the next one would pass the budget; returns the summary ids read."""
    turns_of = pool.summary_turns[q.user]
    text_of = pool.summary_text[q.user]
    seen: set[str] = set()
    out: list[str] = []
    used = 0
    for sid, _ in ranked:
        turns = set(turns_of.get(sid, []))
        if turns and turns <= seen:
            continue
        cost = _tokens(text_of[sid])
        if used + cost > budget:
            if out:
                break
            continue
        used += cost
        seen |= turns
        out.append(sid)
    return out


_TOKEN_CACHE: dict[str, int] = {}


def _tokens(text: str) -> int:
    n = _TOKEN_CACHE.get(text)
    if n is None:
        from hymem.llm.tokens import count_tokens

        n = _TOKEN_CACHE[text] = count_tokens(text)
    return n


# --- ideas -------------------------------------------------------------------------------
def rank(pool: Pool, q: Question) -> list[tuple[str, float]]:
    """hymem's hybrid summary ranking as it is (RRF of dense and BM25)."""
    return [(s.id, s.fused) for s in q.summaries]


def _seg_rank(q: Question) -> dict[str, int]:
    return {g.id: n for n, g in enumerate(q.segments, start=1)}


def seg_rrf(pool: Pool, q: Question, w: float = 1.0) -> list[tuple[str, float]]:
    """Each summary also scores by its segment's rank in a segment search (granularities
    fused): a summary whose raw dialogue matches the question moves up."""
    seg = _seg_rank(q)
    scores = {}
    for n, s in enumerate(q.summaries, start=1):
        g = seg.get(s.segment)
        scores[s.id] = 1 / (RRF + n) + (w / (RRF + g) if g else 0.0)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def _dense_all(pool: Pool, q: Question, qvec: np.ndarray) -> dict[str, float]:
    ids = list(pool.vectors[q.user])
    mat = np.stack([pool.vectors[q.user][i] for i in ids])
    sims = mat @ qvec / (np.linalg.norm(mat, axis=1) * np.linalg.norm(qvec) + 1e-9)
    return dict(zip(ids, sims.tolist(), strict=True))


def prf_dense(pool: Pool, q: Question, m: int = 5, beta: float = 0.5) -> list[tuple[str, float]]:
    """Rocchio feedback: the question vector moved toward its top-m hits, then every summary
    ranked by that vector, fused (RRF) with the original hybrid ranking and the segment rank."""
    top = [pool.vectors[q.user][s.id] for s in q.summaries[:m] if s.id in pool.vectors[q.user]]
    qv = q.qvec / (np.linalg.norm(q.qvec) + 1e-9)
    if top:
        cen = np.mean([t / (np.linalg.norm(t) + 1e-9) for t in top], axis=0)
        qv = qv + beta * cen
    dense = _dense_all(pool, q, qv)
    prf_rank = {i: n for n, (i, _) in enumerate(sorted(dense.items(), key=lambda kv: -kv[1]), 1)}
    seg = _seg_rank(q)
    base = {s.id: n for n, s in enumerate(q.summaries, start=1)}
    segment_of = {s.id: s.segment for s in q.summaries}
    scores = {}
    for sid, pr in prf_rank.items():
        sc = 1 / (RRF + pr)
        if sid in base:
            sc += 1 / (RRF + base[sid])
            g = seg.get(segment_of[sid])
            if g:
                sc += 1 / (RRF + g)
        scores[sid] = sc
    return sorted(scores.items(), key=lambda kv: -kv[1])


IDEAS: dict[str, Idea] = {
    "rank_fill": rank,
    "seg_rrf": seg_rrf,
    "seg_rrf_w0.5": lambda p, q: seg_rrf(p, q, 0.5),
    "seg_rrf_w2": lambda p, q: seg_rrf(p, q, 2.0),
    "prf_dense": prf_dense,
}


def top10(pool: Pool, q: Question) -> list[str]:
    """Today's light path: 10 summaries that each add a source turn."""
    return fill(pool, q, rank(pool, q), 10**9)[:10]


def evaluate(pool: Pool, name: str, pick: Callable[[Pool, Question], list[str]]) -> dict:
    rows = []
    for q in pool.questions:
        ids = pick(pool, q)
        turns_of = pool.summary_turns[q.user]
        got = {_dia(t) for sid in ids for t in turns_of.get(sid, [])}
        gold = {e.strip() for e in q.evidence if e.strip()}
        tokens = sum(_tokens(pool.summary_text[q.user][sid]) for sid in ids)
        rows.append((q.cat, len(gold & got) / len(gold), tokens))
    out = {"idea": name, "recall": statistics.fmean(r for _, r, _ in rows)}
    out["tokens"] = statistics.fmean(t for _, _, t in rows)
    for cat in CATS:
        vals = [r for c, r, _ in rows if c == cat]
        out[cat] = statistics.fmean(vals) if vals else float("nan")
    return out


_DIA = re.compile(r"(D\d+:\d+)$")


def _dia(turn_id: str) -> str:
    m = _DIA.search(turn_id)
    return m.group(1) if m else turn_id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idea", action="append", choices=sorted(IDEAS))
    parser.add_argument("--budget", type=int, default=BUDGET)
    args = parser.parse_args()
    pool = load()
    results = [evaluate(pool, "today: top-10 distinct", top10)]
    for name in args.idea or list(IDEAS):
        idea = IDEAS[name]
        results.append(
            evaluate(pool, name, lambda p, q, idea=idea: fill(p, q, idea(p, q), args.budget))
        )
    table = Table(title=f"LoCoMo dev, {len(pool.questions)} questions, budget {args.budget}")
    for col in ("idea", "recall", *CATS, "tokens"):
        table.add_column(col)
    for r in results:
        table.add_row(
            r["idea"], f"{r['recall']:.3f}", *(f"{r[c]:.3f}" for c in CATS), f"{r['tokens']:.0f}"
        )
    Console().print(table)


# --- second round ------------------------------------------------------------------------
def _rrf_sum(*rankings: tuple[list[str], float]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for ids, w in rankings:
        for n, i in enumerate(ids, start=1):
            scores[i] = scores.get(i, 0.0) + w / (RRF + n)
    return scores


def _session(pool: Pool, q: Question, sid: str) -> str:
    turns = pool.summary_turns[q.user].get(sid) or [""]
    return _dia(turns[0]).split(":")[0]


def diversify(
    pool: Pool, q: Question, ranked: list[tuple[str, float]], lam: float = 0.3
) -> list[tuple[str, float]]:
    """Greedy: each pick's score is divided by (1 + lam * picks already from its session)."""
    left = dict(ranked)
    out: list[tuple[str, float]] = []
    per: dict[str, int] = {}
    while left and len(out) < 80:
        best = max(left, key=lambda i: left[i] / (1 + lam * per.get(_session(pool, q, i), 0)))
        out.append((best, left.pop(best)))
        s = _session(pool, q, best)
        per[s] = per.get(s, 0) + 1
    return out


def combo(
    pool: Pool, q: Question, w_seg: float = 0.5, m: int = 5, beta: float = 0.5, w_prf: float = 1.0
) -> list[tuple[str, float]]:
    """hybrid rank + segment rank (w_seg) + Rocchio dense rank (w_prf)."""
    base = [s.id for s in q.summaries]
    seg = _seg_rank(q)
    seg_ids = sorted(
        base, key=lambda i: seg.get(next(s.segment for s in q.summaries if s.id == i), 10**6)
    )
    seg_ids = [i for i in seg_ids if seg.get(next(s.segment for s in q.summaries if s.id == i))]
    top = [pool.vectors[q.user][i] for i in base[:m]]
    qv = q.qvec / (np.linalg.norm(q.qvec) + 1e-9)
    if top and beta:
        qv = qv + beta * np.mean([t / (np.linalg.norm(t) + 1e-9) for t in top], axis=0)
    dense = _dense_all(pool, q, qv)
    prf_ids = [i for i, _ in sorted(dense.items(), key=lambda kv: -kv[1])][:200]
    scores = _rrf_sum((base, 1.0), (seg_ids, w_seg), (prf_ids, w_prf))
    return sorted(scores.items(), key=lambda kv: -kv[1])


def turn_agg(pool: Pool, q: Question, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """A turn scores the sum of its summaries' scores; it is read through its best summary."""
    turns_of = pool.summary_turns[q.user]
    best: dict[str, tuple[str, float]] = {}
    total: dict[str, float] = {}
    for sid, sc in ranked:
        for t in turns_of.get(sid, [])[:1]:
            total[t] = total.get(t, 0.0) + sc
            if t not in best or best[t][1] < sc:
                best[t] = (sid, sc)
    return [(best[t][0], s) for t, s in sorted(total.items(), key=lambda kv: -kv[1])]


IDEAS.update(
    {
        "div_rank": lambda p, q: diversify(p, q, rank(p, q)),
        "div_rank_l1": lambda p, q: diversify(p, q, rank(p, q), 1.0),
        "combo": combo,
        "combo_noprf": lambda p, q: combo(p, q, beta=0.0),
        "combo_b1": lambda p, q: combo(p, q, beta=1.0),
        "combo_div": lambda p, q: diversify(p, q, combo(p, q)),
        "turn_agg_rank": lambda p, q: turn_agg(p, q, rank(p, q)),
        "turn_agg_combo": lambda p, q: turn_agg(p, q, combo(p, q)),
    }
)


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


IDEAS.update(
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
    IDEAS[f"w_d{_wd}_l{_wl}_s{_ws}_k{_k}"] = lambda p, q, a=_wd, b=_wl, c=_ws, d=_k: weighted(
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


IDEAS.update(
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


IDEAS.update(
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


IDEAS.update(
    {
        "aspect_50_100_40": aspect_cut,
        "aspect_30_60_20": lambda p, q: aspect_cut(p, q, 30, 60, 20),
        "aspect_40_80_40": lambda p, q: aspect_cut(p, q, 40, 80, 40),
        "aspect_100_300_0": lambda p, q: aspect_cut(p, q, 100, 300, 0),
    }
)


IDEAS.update(
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


IDEAS.update(
    {
        "aspect_lex": aspect_lex,
        "aspect_lex_w0.5": lambda p, q: aspect_lex(p, q, 0.5),
        "aspect_named_hybrid": lambda p, q: aspect_lex(p, q, 0.0, True),
    }
)


if __name__ == "__main__":
    main()
