"""Evidence recall@k of retrieval alone (no model): hybrid vs dense-only vs BM25-only, at the
summary and the segment level, each hit mapped to the dialogue turns behind it: a summary to its
own source turns, a segment to its turns. Summaries are also scored the pre-provenance way, each
credited with every turn of its segment, in rows labelled as such (`credit`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hymem.evaluation.metrics import CATEGORY_NAMES, evidence_recall, mean
from hymem.evaluation.progress import make_progress
from hymem.evaluation.systems import Credit, hits_to_turn_ids
from hymem.types import Level

if TYPE_CHECKING:
    from hymem.evaluation.locomo_data import LocomoConversation
    from hymem.memory import Memory

MODES = ("hybrid", "dense", "lexical")
LEVELS = (Level.SUMMARY, Level.SEGMENT)
KS = (5, 10)
CREDITS: tuple[Credit, ...] = ("source", "segment")


def evaluate_retrieval(
    mem: Memory,
    convs: Sequence[LocomoConversation],
    *,
    adversarial: bool = False,
    limit: int | None = None,
    ks: Sequence[int] = KS,
    show_progress: bool = True,
) -> dict[str, Any]:
    """{"rows": [{level, mode, credit, k, recall, n, by_category}], "questions": n}. One search
    at the largest k per (question, level, mode); smaller k are its prefixes, as top-k lists
    are."""
    from hymem.evaluation.runner import eligible_questions

    kmax = max(ks)
    scores: dict[tuple[str, str, int], list[tuple[int, float]]] = {}
    jobs = [
        (conv, qa)
        for conv in convs
        for _, qa in eligible_questions(conv, adversarial=adversarial, limit=limit)
        if qa.evidence
    ]
    with make_progress(show_progress) as progress:
        task = progress.add_task("retrieval recall", total=len(jobs))
        for conv, qa in jobs:
            for level in LEVELS:
                for mode in MODES:
                    hits = mem.search(
                        qa.question, user_id=conv.sample_id, k=kmax, level=level, mode=mode
                    )
                    credits = CREDITS if level is Level.SUMMARY else CREDITS[:1]
                    for k, credit in ((k, c) for k in ks for c in credits):
                        turns = hits_to_turn_ids(mem, hits[:k], conv.sample_id, credit=credit)
                        r = evidence_recall(qa.evidence, turns)
                        if r is not None:
                            key = (level.value, mode, credit, k)
                            scores.setdefault(key, []).append((qa.category, r))
            progress.advance(task)
    rows = []
    for (level, mode, credit, k), vals in sorted(scores.items()):
        by_cat: dict[str, float | None] = {}
        for cat in sorted({c for c, _ in vals}):
            by_cat[CATEGORY_NAMES.get(cat, str(cat))] = mean(r for c, r in vals if c == cat)
        rows.append(
            {
                "level": level,
                "mode": mode,
                "credit": credit,
                "k": k,
                "recall": mean(r for _, r in vals),
                "n": len(vals),
                "by_category": by_cat,
            }
        )
    return {"questions": len(jobs), "rows": rows}
