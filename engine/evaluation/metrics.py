"""Answer and retrieval metrics, LoCoMo-style. Pure functions: no disk, no models.

Normalisation follows LoCoMo's `evaluation.py` (itself SQuAD's): lowercase, drop commas and
punctuation, drop the articles "a", "an", "the" and the word "and", collapse whitespace. F1 is
over a *bag* of tokens (Counter intersection), so a repeated word counts as often as it
appears in both strings; sets would over-reward "paris paris" against "paris". LoCoMo also
Porter-stems tokens with nltk; nltk is not a dependency here, so tokens are compared unstemmed
(stricter by a point or two on plurals and verb forms).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CATEGORY_NAMES: dict[int, str] = {
    1: "multi_hop",
    2: "temporal",
    3: "open_domain",
    4: "single_hop",
    5: "adversarial",
}
# HyMem's Table 1 column order.
TABLE_CATEGORIES: tuple[int, ...] = (4, 1, 3, 2)
CATEGORY_TITLES: dict[int, str] = {
    1: "Multi Hop",
    2: "Temporal",
    3: "Open Domain",
    4: "Single Hop",
    5: "Adversarial",
}

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
# LoCoMo scores an adversarial question as right when the system declines to answer.
_ABSTAIN = ("no information available", "not mentioned")


def normalize_answer(text: object) -> str:
    """LoCoMo normalisation; accepts non-strings because some gold answers are numbers."""
    s = str(text).replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def tokens(text: object) -> list[str]:
    return normalize_answer(text).split()


def token_f1(prediction: object, gold: object) -> float:
    """Bag-of-tokens F1 between normalised strings (0.0 when either side is empty)."""
    pred, ref = tokens(prediction), tokens(gold)
    if not pred or not ref:
        return 0.0
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: object, gold: object) -> float:
    """LoCoMo's multi-hop F1: gold and prediction are comma-separated lists; each gold part
    takes its best-matching predicted part, and the parts' scores are averaged."""
    golds = [g.strip() for g in str(gold).split(",") if g.strip()]
    preds = [p.strip() for p in str(prediction).split(",") if p.strip()]
    if not golds or not preds:
        return 0.0
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


def locomo_f1(prediction: object, gold: object, category: int) -> float:
    """F1 as LoCoMo scores each category: multi-hop per answer part, open-domain against the
    first ';'-separated gold alternative, adversarial as 1 when the system abstains."""
    if category == 5:
        low = str(prediction).lower()
        return 1.0 if any(phrase in low for phrase in _ABSTAIN) else 0.0
    if category == 1:
        return multi_answer_f1(prediction, gold)
    if category == 3:
        gold = str(gold).split(";")[0].strip()
    return token_f1(prediction, gold)


def bleu1(prediction: object, gold: object) -> float:
    """Sentence BLEU-1: clipped unigram precision times the brevity penalty
    (exp(1 - r/c) when the candidate is shorter than the reference)."""
    pred, ref = tokens(prediction), tokens(gold)
    if not pred or not ref:
        return 0.0
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    bp = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return bp * precision


def evidence_recall(evidence: Iterable[str], retrieved: Iterable[str]) -> float | None:
    """Share of the gold evidence dialogue ids covered by the retrieved turns; None when the
    question has no evidence (it is then left out of the average, not counted as 0 or 1)."""
    gold = {e.strip() for e in evidence if e and e.strip()}
    if not gold:
        return None
    return len(gold & set(retrieved)) / len(gold)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolation percentile (numpy's default method); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def aggregate(
    records: Sequence[Mapping[str, Any]], fields: Sequence[str]
) -> dict[str, dict[str, float | int | None]]:
    """Mean of each field per category name and "overall" over the records' `category`.
    None values are skipped, so a metric missing for some questions is averaged over the rest.
    Every group also reports its question count `n`."""
    groups: dict[str, list[Mapping[str, Any]]] = {"overall": list(records)}
    for rec in records:
        name = CATEGORY_NAMES.get(int(rec["category"]), str(rec["category"]))
        groups.setdefault(name, []).append(rec)
    out: dict[str, dict[str, float | int | None]] = {}
    for name, recs in groups.items():
        row: dict[str, float | int | None] = {"n": len(recs)}
        for f in fields:
            row[f] = mean(_as_float(r.get(f)) for r in recs)
        out[name] = row
    return out


def _as_float(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return float(value)
