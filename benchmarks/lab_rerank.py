"""Re-ranking ideas over the lab's cached pools (`lab_pool.py`), each a pure function from a
question's pool to the summaries the light path would read, scored on honest recall and tokens.

    python benchmarks/lab_rerank.py                  # every idea, LoCoMo dev
    python benchmarks/lab_rerank.py --idea rank_fill --idea seg_rrf

An idea that earns its place here is then built into the engine and measured again through
`retrieval_lab.py` (the real `Memory.context`). Every idea tried stays listed in `IDEAS` (and
`lab_ideas_late.LATE_IDEAS`, `lab_ideas_prf.PRF_IDEAS`,
`lab_ideas_context.CONTEXT_IDEAS`), kept
or not, so the ablation table in RESULTS.md can be regenerated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_core import (
    BUDGET,
    CATS,
    RRF,
    Idea,
    _dense_all,
    _dia,
    _rrf_sum,
    _seg_rank,
    evaluate,
    fill,
    rank,
    top10,
)
from lab_ideas_context import CONTEXT_IDEAS
from lab_ideas_late import LATE_IDEAS
from lab_ideas_prf import PRF_IDEAS
from lab_pool import Pool, Question, load
from rich.console import Console
from rich.table import Table


# --- ideas -------------------------------------------------------------------------------
def seg_rrf(pool: Pool, q: Question, w: float = 1.0) -> list[tuple[str, float]]:
    """Each summary also scores by its segment's rank in a segment search (granularities
    fused): a summary whose raw dialogue matches the question moves up."""
    seg = _seg_rank(q)
    scores = {}
    for n, s in enumerate(q.summaries, start=1):
        g = seg.get(s.segment)
        scores[s.id] = 1 / (RRF + n) + (w / (RRF + g) if g else 0.0)
    return sorted(scores.items(), key=lambda kv: -kv[1])


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


def main() -> None:
    parser = argparse.ArgumentParser()
    ideas = {**IDEAS, **LATE_IDEAS, **PRF_IDEAS, **CONTEXT_IDEAS}
    parser.add_argument("--idea", action="append", choices=sorted(ideas))
    parser.add_argument("--budget", type=int, default=BUDGET)
    args = parser.parse_args()
    pool = load()
    results = [evaluate(pool, "today: top-10 distinct", top10)]
    for name in args.idea or list(ideas):
        idea = ideas[name]
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


if __name__ == "__main__":
    main()
