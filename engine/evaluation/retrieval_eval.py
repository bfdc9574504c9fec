"""Evidence recall@k of retrieval alone (no model): hybrid vs dense-only vs BM25-only, at the
summary and the segment level, each hit mapped to the dialogue turns behind it: a summary to its
own source turns, a segment to its turns. Summaries are also scored the pre-provenance way, each
credited with every turn of its segment, in rows labelled as such (`credit`). The flat baselines
over raw turns (`level="turn"`: dense is naive RAG's ranking) are scored beside them.

Every row carries the mean tokens of the top-k hits' text, so no recall figure stands without
its cost; `budget` compares the systems at hymem's own per-question cost (`locomo_budget`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hymem.evaluation.flat import FlatIndex, Ranker
from hymem.evaluation.locomo_budget import question_budgets, summarise_budgets, turn_index
from hymem.evaluation.metrics import CATEGORY_NAMES, evidence_recall, mean
from hymem.evaluation.progress import make_progress
from hymem.evaluation.systems import Credit, hits_to_turn_ids
from hymem.llm.tokens import count_tokens
from hymem.types import Level

if TYPE_CHECKING:
    from hymem.evaluation.locomo_data import LocomoConversation, LocomoQA
    from hymem.llm.roles import ContextItem
    from hymem.memory import Memory
    from hymem.search.hybrid import SearchMode

MODES: tuple[SearchMode, ...] = ("hybrid", "dense", "lexical")
LEVELS = (Level.SUMMARY, Level.SEGMENT)
KS = (5, 10)
CREDITS: tuple[Credit, ...] = ("source", "segment")
# The flat rankers under the names of the store's search modes, so rows line up by mode.
FLAT_MODES: dict[str, Ranker] = {"hybrid": "hybrid", "dense": "dense", "lexical": "bm25"}

Key = tuple[str, str, str, int]
Scores = dict[Key, list[tuple[int, float, int]]]  # (category, recall, tokens) per question


def evaluate_retrieval(
    mem: Memory,
    convs: Sequence[LocomoConversation],
    *,
    adversarial: bool = False,
    limit: int | None = None,
    ks: Sequence[int] = KS,
    show_progress: bool = True,
) -> dict[str, Any]:
    """{"rows": [{level, mode, credit, k, recall, tokens, n, by_category}], "questions": n,
    "budget": matched-budget summary, "budget_questions": its per-question rows}. One search
    at the largest k per (question, level, mode); smaller k are its prefixes, as top-k lists
    are."""
    from hymem.evaluation.runner import eligible_questions

    scores: Scores = {}
    budget_rows: list[dict[str, Any]] = []
    per_conv = [
        (
            conv,
            [
                (i, qa)
                for i, qa in eligible_questions(conv, adversarial=adversarial, limit=limit)
                if qa.evidence
            ],
        )
        for conv in convs
    ]
    n_questions = sum(len(qs) for _, qs in per_conv)
    with make_progress(show_progress) as progress:
        task = progress.add_task("retrieval recall", total=n_questions)
        for conv, questions in per_conv:
            index = turn_index(mem, conv)  # the turns are embedded once, on the first question
            for idx, qa in questions:
                _score_store(mem, conv.sample_id, qa, ks, scores)
                _score_flat(index, qa, ks, scores)
                budget_rows.append(question_budgets(mem, conv, idx, qa, index))
                progress.advance(task)
    return {
        "questions": n_questions,
        "rows": _rows(scores),
        "budget": summarise_budgets(budget_rows),
        "budget_questions": budget_rows,
    }


def _score_store(
    mem: Memory, user_id: str, qa: LocomoQA, ks: Sequence[int], scores: Scores
) -> None:
    """recall@k and tokens of hymem's summary and segment search, in every mode."""
    for level in LEVELS:
        for mode in MODES:
            hits = mem.search(qa.question, user_id=user_id, k=max(ks), level=level, mode=mode)
            counts = [count_tokens(h.text) for h in hits]
            credits = CREDITS if level is Level.SUMMARY else CREDITS[:1]
            for k, credit in ((k, c) for k in ks for c in credits):
                turns = hits_to_turn_ids(mem, hits[:k], user_id, credit=credit)
                r = evidence_recall(qa.evidence, turns)
                if r is not None:
                    key = (level.value, mode, credit, k)
                    scores.setdefault(key, []).append((qa.category, r, sum(counts[:k])))


def _score_flat(
    index: FlatIndex[ContextItem], qa: LocomoQA, ks: Sequence[int], scores: Scores
) -> None:
    """recall@k and tokens of the flat baselines' top-k raw turns."""
    for mode, ranker in FLAT_MODES.items():
        ranking = index.rank(ranker, qa.question)
        for k in ks:
            r = evidence_recall(qa.evidence, ranking[:k])
            if r is not None:
                tokens = sum(index.tokens(i) for i in ranking[:k])
                scores.setdefault(("turn", mode, "source", k), []).append((qa.category, r, tokens))


def _rows(scores: Scores) -> list[dict[str, Any]]:
    rows = []
    for (level, mode, credit, k), vals in sorted(scores.items()):
        by_cat: dict[str, float | None] = {}
        for cat in sorted({c for c, _, _ in vals}):
            by_cat[CATEGORY_NAMES.get(cat, str(cat))] = mean(r for c, r, _ in vals if c == cat)
        rows.append(
            {
                "level": level,
                "mode": mode,
                "credit": credit,
                "k": k,
                "recall": mean(r for _, r, _ in vals),
                "tokens": mean(t for _, _, t in vals),
                "n": len(vals),
                "by_category": by_cat,
            }
        )
    return rows
