"""LoCoMo retrieval at hymem's own cost: per question, the context hymem's light path reads (its
summaries within `light_tokens`) and its deep path reads (the model-selected segments), each
with its tokens and honest evidence recall (`hits_to_turn_ids`); then the flat baselines over
raw turns (dense as naive RAG ranks them, BM25, their RRF hybrid), each cut to THAT question's
light and deep token budgets (`hymem.evaluation.budget`). The table answers "at the same cost,
which retrieval finds more evidence?".

Turns are rendered as naive RAG shows them (`Speaker: text`), and their tokens are those of that
text; hymem's are those of its hits' text (summary sentences, raw segment lines). The deep context
is the select role's choice: free on the extractive backend, model calls on any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from hymem.api.internals import embedder_of
from hymem.evaluation.baselines import conversation_items
from hymem.evaluation.budget import cut_to_budget
from hymem.evaluation.flat import FlatIndex, Ranker, word_tokens
from hymem.evaluation.metrics import CATEGORY_NAMES, evidence_recall, mean
from hymem.evaluation.systems import hits_to_turn_ids
from hymem.llm.roles import ContextItem
from hymem.llm.tokens import count_tokens

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.backfill.locomo import LocomoConversation, LocomoQA

Depth = Literal["light", "deep"]
DEPTHS: tuple[Depth, ...] = ("light", "deep")
# Naive RAG's own ranking first.
FLAT_RANKERS: tuple[Ranker, ...] = ("dense", "bm25", "hybrid")
FLAT_SYSTEMS: tuple[str, ...] = tuple(f"{r}-turn" for r in FLAT_RANKERS)


def reference(depth: str) -> str:
    """The hymem system whose tokens set the budget at `depth`."""
    return f"hymem-{depth}"


def turn_index(mem: Memory, conv: LocomoConversation) -> FlatIndex[ContextItem]:
    """One conversation's turns as naive RAG renders them, for every flat ranker."""
    return FlatIndex(
        conversation_items(conv), embedder_of(mem), rrf_k=mem.config.rrf_k, tokenize=word_tokens
    )


def question_budgets(
    mem: Memory, conv: LocomoConversation, idx: int, qa: LocomoQA, index: FlatIndex[ContextItem]
) -> dict[str, Any]:
    """One question's row: at each depth, hymem's context and each flat ranking cut to it."""
    row: dict[str, Any] = {"conversation": conv.sample_id, "qa_index": idx, "category": qa.category}
    for depth in DEPTHS:
        hits = mem.context(qa.question, user_id=conv.sample_id, depth=depth)
        budget = sum(count_tokens(h.text) for h in hits)
        turns = hits_to_turn_ids(mem, hits, conv.sample_id)
        systems: dict[str, dict[str, Any]] = {
            reference(depth): {
                "recall": evidence_recall(qa.evidence, turns),
                "tokens": budget,
                "units": len(hits),
                "first_over": False,
                # honest crediting, shown: the turns each hit's text was drawn from
                "turns_per_unit": mean(len(h.turn_ids) for h in hits) if hits else None,
            }
        }
        for ranker, name in zip(FLAT_RANKERS, FLAT_SYSTEMS, strict=True):
            cut = cut_to_budget(index.with_tokens(index.rank(ranker, qa.question)), budget)
            systems[name] = {
                "recall": evidence_recall(qa.evidence, cut.ids),
                "tokens": cut.tokens,
                "units": cut.units,
                "first_over": cut.first_over,
            }
        row[depth] = {"budget": budget, "systems": systems}
    return row


def _cell(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "recall": mean(r["recall"] for r in rows),
        "tokens": mean(r["tokens"] for r in rows),
        "n": sum(1 for r in rows if r["recall"] is not None),
    }


def summarise_budgets(questions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per depth: the mean budget and, per system, mean recall and tokens used (overall and by
    category), mean units taken and how often the first unit alone was over the budget."""
    out: dict[str, Any] = {"questions": len(questions), "depths": {}}
    for depth in DEPTHS:
        systems: dict[str, Any] = {}
        for name in (reference(depth), *FLAT_SYSTEMS):
            rows = [(q["category"], q[depth]["systems"][name]) for q in questions]
            cats = sorted({c for c, _ in rows})
            systems[name] = {
                **_cell([r for _, r in rows]),
                "units": mean(r["units"] for _, r in rows),
                "turns_per_unit": mean(r.get("turns_per_unit") for _, r in rows),
                "first_over": sum(1 for _, r in rows if r["first_over"]),
                "by_category": {
                    CATEGORY_NAMES.get(c, str(c)): _cell([r for k, r in rows if k == c])
                    for c in cats
                },
            }
        out["depths"][depth] = {
            "reference": reference(depth),
            "budget_tokens": mean(q[depth]["budget"] for q in questions),
            "zero_budget": sum(1 for q in questions if q[depth]["budget"] == 0),
            "systems": systems,
        }
    return out


__all__ = [
    "DEPTHS",
    "FLAT_SYSTEMS",
    "question_budgets",
    "reference",
    "summarise_budgets",
    "turn_index",
]
