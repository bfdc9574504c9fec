"""LoCoMo-style answer and retrieval metrics (pure)."""

from __future__ import annotations

import math

import pytest
from hymem.evaluation.metrics import (
    aggregate,
    bleu1,
    evidence_recall,
    locomo_f1,
    mean,
    multi_answer_f1,
    normalize_answer,
    percentile,
    token_f1,
)


def test_normalisation_drops_case_punctuation_articles_and_commas() -> None:
    assert normalize_answer("The Lake, Sunrise!") == "lake sunrise"
    assert normalize_answer("An apple and a pear.") == "apple pear"
    assert normalize_answer(2022) == "2022"
    assert normalize_answer("  theatre  ") == "theatre"  # "the" only as a whole word


def test_f1_counts_repeated_tokens_as_a_bag_not_a_set() -> None:
    # With sets, "paris paris" vs "paris" would be a perfect 1.0.
    assert token_f1("paris paris", "paris") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("paris", "paris") == 1.0
    # Gold repeats a word twice; one copy predicted -> recall 1/2.
    assert token_f1("new", "new new") == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_f1_partial_and_zero_and_empty() -> None:
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    assert token_f1("May 2023", "7 May 2023") == pytest.approx(0.8)
    assert token_f1("banana", "apple") == 0.0
    assert token_f1("", "apple") == 0.0
    assert token_f1("the", "apple") == 0.0  # only an article


def test_multi_hop_f1_matches_each_gold_part_to_its_best_prediction_part() -> None:
    assert multi_answer_f1("pottery, puppy Oscar", "puppy Oscar, pottery") == 1.0
    assert multi_answer_f1("pottery", "puppy Oscar, pottery") == pytest.approx(0.5)
    assert locomo_f1("pottery", "puppy Oscar, pottery", 1) == pytest.approx(0.5)


def test_locomo_f1_per_category() -> None:
    assert locomo_f1("psychology", "psychology; counseling", 3) == 1.0
    assert locomo_f1("Not mentioned in the conversation", "x", 5) == 1.0
    assert locomo_f1("self-care is important", "self-care is important", 5) == 0.0
    assert locomo_f1("violin", "violin", 4) == 1.0


def test_bleu1_with_brevity_penalty() -> None:
    assert bleu1("lake sunrise", "lake sunrise") == 1.0
    # Shorter candidate: precision 1, BP = exp(1 - 2/1).
    assert bleu1("sunrise", "lake sunrise") == pytest.approx(math.exp(-1))
    # Longer candidate: no penalty, clipped precision 1/3 ("sunrise" counted once).
    assert bleu1("sunrise sunrise sunrise", "lake sunrise") == pytest.approx(1 / 3)
    assert bleu1("", "x") == 0.0


def test_evidence_recall() -> None:
    assert evidence_recall(["D1:1", "D2:3"], ["D2:3", "D9:9"]) == 0.5
    assert evidence_recall(["D1:1"], []) == 0.0
    assert evidence_recall([], ["D1:1"]) is None


def test_percentile_and_mean() -> None:
    assert percentile([], 50) is None
    assert percentile([10.0], 95) == 10.0
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert mean([None, 1.0, 3.0]) == 2.0
    assert mean([None]) is None


def test_aggregate_per_category_and_overall_skips_none() -> None:
    recs = [
        {"category": 4, "f1": 1.0, "judge_correct": True, "evidence_recall": None},
        {"category": 4, "f1": 0.0, "judge_correct": False, "evidence_recall": 1.0},
        {"category": 2, "f1": 0.5, "judge_correct": None, "evidence_recall": 0.0},
    ]
    agg = aggregate(recs, ["f1", "judge_correct", "evidence_recall"])
    assert agg["overall"]["n"] == 3
    assert agg["overall"]["f1"] == pytest.approx(0.5)
    assert agg["single_hop"] == {"n": 2, "f1": 0.5, "judge_correct": 0.5, "evidence_recall": 1.0}
    assert agg["temporal"]["judge_correct"] is None
    assert "multi_hop" not in agg
