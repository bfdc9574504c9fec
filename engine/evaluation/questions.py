"""Which LoCoMo conversations and questions a run asks: the ones named (all by default), and per
conversation the questions of categories 1-4 (5 when asked), capped per category and in all.
Shared by the runner and the retrieval stage, in the dataset's order."""

from __future__ import annotations

from collections.abc import Sequence

from hymem.backfill.locomo import LocomoConversation, LocomoQA
from hymem.core.errors import UserInputError


def select_conversations(
    convs: Sequence[LocomoConversation], wanted: Sequence[str]
) -> list[LocomoConversation]:
    if not wanted:
        return list(convs)
    by_id = {c.sample_id: c for c in convs}
    missing = [w for w in wanted if w not in by_id]
    if missing:
        raise UserInputError(
            f"conversation(s) {missing} not in the dataset; it has {', '.join(by_id)}"
        )
    return [by_id[w] for w in dict.fromkeys(wanted)]


def eligible_questions(
    conv: LocomoConversation,
    *,
    adversarial: bool,
    limit: int | None,
    per_category: int | None = None,
) -> list[tuple[int, LocomoQA]]:
    """(index in the conversation's qa list, qa) for categories 1-4 (and 5 when asked): the
    first `per_category` of each category (all when None), then the first `limit` of those,
    in the conversation's order."""
    cats = {1, 2, 3, 4, 5} if adversarial else {1, 2, 3, 4}
    out = [(i, qa) for i, qa in enumerate(conv.qa) if qa.category in cats]
    if per_category is not None:
        taken: dict[int, int] = {}
        kept = []
        for i, qa in out:
            taken[qa.category] = taken.get(qa.category, 0) + 1
            if taken[qa.category] <= per_category:
                kept.append((i, qa))
        out = kept
    return out[:limit] if limit is not None else out


__all__ = ["eligible_questions", "select_conversations"]
