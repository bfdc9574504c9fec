"""Index-side ideas (session 41): what the summaries are searched *by*, not how the found ones
are ranked. A LoCoMo evidence turn is often a reply ("Yes! It was amazing") whose meaning is in
the turn before it; its extractive summary then carries neither the question's words nor its
sense. Each idea adds one ranking over every summary of the user, fused (RRF) into the kept rank:

* `ctx_dense`: MiniLM of "previous turn + the summary" (contextual document vectors);
* `ctx_lex`: BM25 over the summary plus its previous and next turns' words (document expansion);
* `turn_dense`: MiniLM of each raw turn (speaker, text, photo caption), a turn's rank handed to
  its summaries;
* `pair_dense`: MiniLM of each raw turn with the turn before it.

The vectors are computed once and cached in `benchmarks/.lab/locomo/context.pkl`.

    HF_HUB_OFFLINE=1 python benchmarks/lab_rerank.py --idea kept --idea ctx_dense ...
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_core import Idea, _dia, _rrf_sum
from lab_ideas_late import _aspect_lists
from lab_pool import Pool, Question
from lab_stores import LAB, locomo_conversations

CONTEXT = LAB / "locomo" / "context.pkl"
CONTEXT_IDEAS: dict[str, Idea] = {}


def _turns() -> dict[str, dict[str, tuple[str, str]]]:
    """{user: {dia id: (speaker, rendered text)}} in dialogue order."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for conv in locomo_conversations():
        rows: dict[str, tuple[str, str]] = {}
        for session in conv.sessions:
            for t in session.turns:
                rows[t.dia_id] = (t.speaker, t.render_text())
        out[conv.sample_id] = rows
    return out


def _neighbours(rows: dict[str, tuple[str, str]]) -> dict[str, tuple[str | None, str | None]]:
    order = list(rows)
    out: dict[str, tuple[str | None, str | None]] = {}
    for n, d in enumerate(order):
        sess = d.split(":")[0]
        prev = order[n - 1] if n and order[n - 1].split(":")[0] == sess else None
        nxt = order[n + 1] if n + 1 < len(order) and order[n + 1].split(":")[0] == sess else None
        out[d] = (prev, nxt)
    return out


def _say(rows: dict[str, tuple[str, str]], d: str | None) -> str:
    if d is None or d not in rows:
        return ""
    speaker, text = rows[d]
    return f"{speaker}: {text}"


def features(pool: Pool) -> dict[str, Any]:
    if CONTEXT.exists():
        with open(CONTEXT, "rb") as fh:
            return pickle.load(fh)
    from hymem.embed.embedders import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder()
    turns = _turns()
    out: dict[str, Any] = {"turns": turns, "ctx": {}, "turn": {}, "pair": {}, "exp": {}}
    for user, texts in pool.summary_text.items():
        rows = turns[user]
        nb = _neighbours(rows)
        ids = list(texts)
        ctx_texts, exp_texts = [], []
        for sid in ids:
            src = [_dia(t) for t in pool.summary_turns[user].get(sid, [])]
            prev, nxt = nb.get(src[0], (None, None)) if src else (None, None)
            ctx_texts.append(f"{_say(rows, prev)}\n{texts[sid]}".strip())
            exp_texts.append(f"{texts[sid]} {_say(rows, prev)} {_say(rows, nxt)}")
        out["ctx"][user] = dict(zip(ids, emb.embed(ctx_texts), strict=True))
        out["exp"][user] = dict(zip(ids, exp_texts, strict=True))
        dias = list(rows)
        out["turn"][user] = dict(zip(dias, emb.embed([_say(rows, d) for d in dias]), strict=True))
        out["pair"][user] = dict(
            zip(
                dias,
                emb.embed([f"{_say(rows, nb[d][0])}\n{_say(rows, d)}".strip() for d in dias]),
                strict=True,
            )
        )
        print(f"context vectors {user}", flush=True)
    with open(CONTEXT, "wb") as fh:
        pickle.dump(out, fh)
    return out


_F: dict[str, Any] = {}


def _f(pool: Pool) -> dict[str, Any]:
    if not _F:
        _F.update(features(pool))
    return _F


def _dense_rank(vecs: dict[str, np.ndarray], qvec: np.ndarray, n: int) -> list[str]:
    ids = list(vecs)
    mat = np.stack([vecs[i] for i in ids])
    sims = mat @ qvec / (np.linalg.norm(mat, axis=1) * np.linalg.norm(qvec) + 1e-9)
    return [ids[i] for i in np.argsort(-sims)[:n]]


_BM: dict[str, tuple[list[str], Any]] = {}


def _lex_rank(pool: Pool, q: Question, n: int = 200) -> list[str]:
    from rank_bm25 import BM25Okapi

    if q.user not in _BM:
        exp = _f(pool)["exp"][q.user]
        ids = list(exp)
        _BM[q.user] = (ids, BM25Okapi([re.findall(r"\w+", exp[i].lower()) for i in ids]))
    ids, bm = _BM[q.user]
    scores = bm.get_scores(re.findall(r"\w+", q.question.lower()))
    return [ids[i] for i in np.argsort(-scores)[:n] if scores[i] > 0]


def _turn_to_summaries(pool: Pool, q: Question, dias: list[str]) -> list[str]:
    """A turn ranking as a summary ranking: each turn's summaries in their kept order."""
    by_turn: dict[str, list[str]] = {}
    for sid, turns in pool.summary_turns[q.user].items():
        for t in turns[:1]:
            by_turn.setdefault(_dia(t), []).append(sid)
    out: list[str] = []
    for d in dias:
        out.extend(by_turn.get(d, []))
    return out


def _kept_parts(pool: Pool, q: Question) -> list[tuple[list[str], float]]:
    asp_ids, named, base, seg_ids = _aspect_lists(pool, q, 100, 200, 40)
    return [(asp_ids, 1.0), (named, 1.0), (base, 1.0), (seg_ids, 0.5)]


def with_list(
    pool: Pool, q: Question, kind: str, w: float = 1.0, n: int = 200
) -> list[tuple[str, float]]:
    f = _f(pool)
    if kind == "ctx_dense":
        extra = _dense_rank(f["ctx"][q.user], q.qvec, n)
    elif kind == "ctx_lex":
        extra = _lex_rank(pool, q, n)
    elif kind in ("turn_dense", "pair_dense"):
        vecs = f["turn" if kind == "turn_dense" else "pair"][q.user]
        extra = _turn_to_summaries(pool, q, _dense_rank(vecs, q.qvec, n // 2))
    else:
        raise ValueError(kind)
    scores = _rrf_sum(*_kept_parts(pool, q), (extra, w))
    return sorted(scores.items(), key=lambda kv: -kv[1])


for _kind in ("ctx_dense", "ctx_lex", "turn_dense", "pair_dense"):
    for _w in (0.5, 1.0):
        CONTEXT_IDEAS[f"{_kind}_w{_w}"] = lambda p, q, k=_kind, w=_w: with_list(p, q, k, w)


__all__ = ["CONTEXT_IDEAS", "features", "with_list"]


# --- the same context without a second embedding: mix the previous turn's summary vectors ---
_MIX: dict[tuple[str, float], dict[str, np.ndarray]] = {}


def _mixed(pool: Pool, user: str, alpha: float) -> dict[str, np.ndarray]:
    key = (user, alpha)
    if key not in _MIX:
        nb = _neighbours(_f(pool)["turns"][user])
        vecs = pool.vectors[user]
        by_turn: dict[str, list[np.ndarray]] = {}
        first: dict[str, str] = {}
        for sid, turns in pool.summary_turns[user].items():
            if turns:
                first[sid] = _dia(turns[0])
                by_turn.setdefault(first[sid], []).append(vecs[sid])
        out = {}
        for sid, v in vecs.items():
            prev = nb.get(first.get(sid, ""), (None, None))[0]
            ctx = by_turn.get(prev or "")
            u = v / (np.linalg.norm(v) + 1e-9)
            if ctx:
                m = np.mean(ctx, axis=0)
                u = u + alpha * m / (np.linalg.norm(m) + 1e-9)
            out[sid] = u
        _MIX[key] = out
    return _MIX[key]


def ctx_mix(pool: Pool, q: Question, alpha: float, w: float = 1.0) -> list[tuple[str, float]]:
    extra = _dense_rank(_mixed(pool, q.user, alpha), q.qvec, 200)
    scores = _rrf_sum(*_kept_parts(pool, q), (extra, w))
    return sorted(scores.items(), key=lambda kv: -kv[1])


for _a in (0.3, 0.6):
    CONTEXT_IDEAS[f"ctx_mix_a{_a}"] = lambda p, q, a=_a: ctx_mix(p, q, a)
