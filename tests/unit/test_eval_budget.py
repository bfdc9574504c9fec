"""Matched-budget retrieval without disk or models: the prefix cut, its scores, LoCoMo's
per-depth summary and the report table."""

from __future__ import annotations

from typing import Any

import pytest
from hymem.evaluation.budget import Cut, cut_to_budget, recall_any_all
from hymem.evaluation.locomo_budget import FLAT_SYSTEMS, summarise_budgets
from hymem.evaluation.report_retrieval import budget_section

RANKING = [("a", 40), ("b", 30), ("c", 50), ("d", 5)]


def test_cut_is_the_longest_prefix_that_fits() -> None:
    assert cut_to_budget(RANKING, 70) == Cut(("a", "b"), 70, 70)
    # "d" would still fit after "c" is refused, but a cut is a prefix, as a top-k list is.
    assert cut_to_budget(RANKING, 100).ids == ("a", "b")
    assert cut_to_budget(RANKING, 1000) == Cut(("a", "b", "c", "d"), 125, 1000)
    assert cut_to_budget([], 10) == Cut((), 0, 10)


def test_first_unit_over_budget_gets_nothing_and_says_so() -> None:
    cut = cut_to_budget(RANKING, 39)
    assert cut.ids == () and cut.tokens == 0 and cut.first_over and cut.units == 0
    # A zero budget (hymem read nothing) affords only free units.
    assert cut_to_budget([("e", 0), ("a", 40)], 0) == Cut(("e",), 0, 0)
    assert not cut_to_budget(RANKING, 40).first_over


def test_cut_reads_the_ranking_only_up_to_the_unit_that_does_not_fit() -> None:
    read: list[str] = []

    def lazily() -> Any:
        for unit_id, tokens in RANKING:
            read.append(unit_id)
            yield unit_id, tokens

    cut_to_budget(lazily(), 70)
    assert read == ["a", "b", "c"]


def test_recall_any_all_over_a_set() -> None:
    assert recall_any_all({"s1", "s2"}, {"s1", "s3"}) == {"recall_any": 1.0, "recall_all": 0.0}
    assert recall_any_all(["s1", "s3"], {"s1", "s3"}) == {"recall_any": 1.0, "recall_all": 1.0}
    assert recall_any_all([], {"s1"}) == {"recall_any": 0.0, "recall_all": 0.0}


def _system(recall: float | None, tokens: int, units: int = 1, over: bool = False) -> dict:
    return {"recall": recall, "tokens": tokens, "units": units, "first_over": over}


def _question(category: int, light: int, deep: int, flat: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"conversation": "c", "qa_index": category, "category": category}
    for depth, budget in (("light", light), ("deep", deep)):
        systems = {f"hymem-{depth}": {**_system(1.0, budget, 10), "turns_per_unit": 1.0}}
        systems |= {name: flat[depth] for name in FLAT_SYSTEMS}
        row[depth] = {"budget": budget, "systems": systems}
    return row


QUESTIONS = [
    _question(4, 100, 0, {"light": _system(0.5, 90, 3), "deep": _system(0.0, 0, 0, True)}),
    _question(2, 300, 900, {"light": _system(None, 280, 4), "deep": _system(1.0, 880, 9)}),
]


def test_budget_summary_means_per_depth_and_category() -> None:
    s = summarise_budgets(QUESTIONS)
    assert s["questions"] == 2
    light, deep = s["depths"]["light"], s["depths"]["deep"]
    assert light["reference"] == "hymem-light" and light["budget_tokens"] == 200
    assert deep["zero_budget"] == 1 and deep["budget_tokens"] == 450
    dense = light["systems"]["dense-turn"]
    assert dense["recall"] == 0.5 and dense["n"] == 1  # a None recall is left out ...
    assert dense["tokens"] == 185  # ... but its tokens were still spent
    assert dense["by_category"]["single_hop"] == {"recall": 0.5, "tokens": 90, "n": 1}
    assert deep["systems"]["bm25-turn"]["first_over"] == 1
    assert deep["systems"]["hymem-deep"]["units"] == 10


def test_budget_table_puts_recall_beside_tokens() -> None:
    md = "\n".join(budget_section({"budget": summarise_budgets(QUESTIONS)}))
    assert "### At hymem's light budget (mean 200 tokens; 0 questions" in md
    assert "### At hymem's deep budget (mean 450 tokens; 1 questions with an empty deep" in md
    header = (
        "| System | Single Hop | Multi Hop | Open Domain | Temporal | Overall | Units "
        "| First unit over budget | n |"
    )
    assert header in md
    assert "| hymem-light (its budgeted summaries) | 100.00 (100) | – | – | 100.00 (300) " in md
    assert (
        "| dense-turn (naive RAG's ranking) | 50.00 (90) | – | – | – | 50.00 (185) | 3.5 | 0 | 1 |"
        in md
    )
    assert "| bm25-turn | 0.00 (0) | – | – | 100.00 (880) | 50.00 (440) | 4.5 | 1 | 2 |" in md
    assert budget_section({}) == [] and budget_section({"budget": {"questions": 0}}) == []
    # honest crediting shown: what each light hit stands for
    assert "hymem-light read 10.0 hits a question, each standing for 1.00 turns" in md


@pytest.mark.parametrize("budget", [0, 39, 40, 69, 70, 125, 126])
def test_a_cut_never_spends_more_than_its_budget(budget: int) -> None:
    cut = cut_to_budget(RANKING, budget)
    assert cut.tokens <= budget and cut.tokens == sum(t for i, t in RANKING if i in cut.ids)
