"""The lab's shared scoring: fill a ranking into the light budget the engine's way, count
tokens, and score recall by LoCoMo category (`evaluate`). Pure over the cached pools."""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_pool import Pool, Question

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


def rank(pool: Pool, q: Question) -> list[tuple[str, float]]:
    """hymem's hybrid summary ranking as it is (RRF of dense and BM25)."""
    return [(s.id, s.fused) for s in q.summaries]


def _seg_rank(q: Question) -> dict[str, int]:
    return {g.id: n for n, g in enumerate(q.segments, start=1)}


def _dense_all(pool: Pool, q: Question, qvec: np.ndarray) -> dict[str, float]:
    ids = list(pool.vectors[q.user])
    mat = np.stack([pool.vectors[q.user][i] for i in ids])
    sims = mat @ qvec / (np.linalg.norm(mat, axis=1) * np.linalg.norm(qvec) + 1e-9)
    return dict(zip(ids, sims.tolist(), strict=True))


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


def _rrf_sum(*rankings: tuple[list[str], float]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for ids, w in rankings:
        for n, i in enumerate(ids, start=1):
            scores[i] = scores.get(i, 0.0) + w / (RRF + n)
    return scores
