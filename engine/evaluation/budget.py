"""Retrieval at a matched context budget (pure): a baseline's ranking is cut to the tokens
hymem's context used for the same question, so a table compares what each system finds at the
same cost, not at the same k.

The cut is the longest PREFIX of the ranking whose tokens fit the budget, the way a top-k list
is a prefix: it stops at the first unit that does not fit, and never skips it to pull up a
cheaper unit from further down (that would rank by length as well as by relevance). When the
first unit alone is over the budget the cut is empty: the baseline gets nothing it cannot
afford. Such cuts are counted (`Cut.first_over`) and the reports say how many there were.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cut:
    """The units a ranking affords within a budget, best first, and what they cost."""

    ids: tuple[str, ...]
    tokens: int
    budget: int
    first_over: bool = False  # the top unit alone exceeded the budget, so nothing was taken

    @property
    def units(self) -> int:
        return len(self.ids)


def cut_to_budget(ranking: Iterable[tuple[str, int]], budget: int) -> Cut:
    """The longest prefix of (id, tokens) pairs whose tokens sum to at most `budget`. The
    ranking is read lazily, up to the first unit that does not fit."""
    ids: list[str] = []
    used = 0
    for unit_id, tokens in ranking:
        if used + tokens > budget:
            return Cut(tuple(ids), used, budget, first_over=not ids)
        ids.append(unit_id)
        used += tokens
    return Cut(tuple(ids), used, budget)


def recall_any_all(found: Collection[str], relevant: Collection[str]) -> dict[str, float]:
    """LongMemEval's recall_any and recall_all over a set of found ids (no k: the set is the
    whole context a cut affords)."""
    have = set(found)
    return {
        "recall_any": float(any(r in have for r in relevant)),
        "recall_all": float(all(r in have for r in relevant)),
    }


__all__ = ["Cut", "cut_to_budget", "recall_any_all"]
