"""A learned combination of the kept rank's signals (session 41), scored honestly: a logistic
regression over generic per-candidate features (each list's RRF term, the raw cosines, the
summary's length and form), trained on six LoCoMo conversations and scored on the seventh,
for each of the seven (leave-one-conversation-out). If a handful of weights learned this way
beat the hand-set fusion on conversations they never saw, they could ship as constants.

    HF_HUB_OFFLINE=1 python benchmarks/lab_ideas_ltr.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_core import RRF, _dia, _tokens, evaluate, fill
from lab_ideas_late import _aspect, _aspect_lists, _qindex
from lab_pool import Pool, Question, load

_FALLBACK = re.compile(r"^[A-Z][\w' -]{0,30}: ")
_PHOTO = re.compile(r"shared a photo|shares a photo", re.I)
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
FEATURES = (
    "asp",
    "named",
    "base",
    "seg",
    "cos_q",
    "cos_asp",
    "log_tokens",
    "fallback",
    "photo",
    "names",
    "in_lists",
)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v) + 1e-9)


def candidates(pool: Pool, q: Question) -> tuple[list[str], np.ndarray]:
    """The union of the kept rank's lists, each candidate's feature row."""
    asp_ids, named, base, seg_ids = _aspect_lists(pool, q, 100, 200, 40)
    lists = {"asp": asp_ids, "named": named, "base": base, "seg": seg_ids}
    pos = {k: {i: n for n, i in enumerate(v, start=1)} for k, v in lists.items()}
    ids = list(dict.fromkeys([*base, *asp_ids, *named, *seg_ids]))
    qv = _unit(q.qvec)
    av = _unit(_aspect(pool)["vec"][_qindex(pool, q)])
    vecs = pool.vectors[q.user]
    texts = pool.summary_text[q.user]
    rows = []
    for i in ids:
        v = _unit(vecs[i])
        t = texts[i]
        rank_terms = [1 / (RRF + pos[k][i]) if i in pos[k] else 0.0 for k in lists]
        rows.append(
            [
                *(60 * x for x in rank_terms),
                float(v @ qv),
                float(v @ av),
                float(np.log(_tokens(t) + 1)),
                float(bool(_FALLBACK.match(t))),
                float(bool(_PHOTO.search(t))),
                float(len(set(_NAME.findall(t)))),
                float(sum(x > 0 for x in rank_terms)),
            ]
        )
    return ids, np.asarray(rows, dtype=np.float64)


def labels(pool: Pool, q: Question, ids: list[str]) -> np.ndarray:
    gold = {e.strip() for e in q.evidence if e.strip()}
    turns = pool.summary_turns[q.user]
    return np.asarray([any(_dia(t) in gold for t in turns.get(i, [])) for i in ids], dtype=int)


def main(kind: str = "logistic") -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    pool = load()
    feats = {id(q): candidates(pool, q) for q in pool.questions}
    users = sorted({q.user for q in pool.questions})
    scored: dict[int, list[tuple[str, float]]] = {}
    coefs = []
    for held in users:
        train = [q for q in pool.questions if q.user != held]
        x = np.vstack([feats[id(q)][1] for q in train])
        y = np.concatenate([labels(pool, q, feats[id(q)][0]) for q in train])
        scaler = StandardScaler().fit(x)
        model: Any
        if kind == "logistic":
            model = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
        elif kind == "logistic_plain":
            model = LogisticRegression(C=1.0, max_iter=2000)
        else:
            model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_depth=4)
        model.fit(scaler.transform(x), y)
        coefs.append(getattr(model, "coef_", np.zeros((1, len(FEATURES))))[0])
        for q in pool.questions:
            if q.user != held:
                continue
            ids, f = feats[id(q)]
            s = model.predict_proba(scaler.transform(f))[:, 1]
            scored[id(q)] = sorted(zip(ids, s.tolist(), strict=True), key=lambda kv: -kv[1])
    from lab_ideas_prf import _kept

    kept = evaluate(
        pool,
        "kept",
        lambda p, q: fill(p, q, sorted(_kept(p, q)[1].items(), key=lambda kv: -kv[1]), 400),
    )
    ltr = evaluate(pool, f"{kind} (held-out)", lambda p, q: fill(p, q, scored[id(q)], 400))
    for r in (kept, ltr):
        print(
            f"{r['idea']:16s} {r['recall']:.3f} sh {r['single_hop']:.3f} mh {r['multi_hop']:.3f}"
            f" t {r['temporal']:.3f} od {r['open_domain']:.3f} tok {r['tokens']:.0f}"
        )
    mean = np.mean(coefs, axis=0)
    print(
        "mean standardised weights:", dict(zip(FEATURES, np.round(mean, 2).tolist(), strict=True))
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "logistic")
