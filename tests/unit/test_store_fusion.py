"""Reciprocal-rank fusion is pure: ranks in, fused order out."""

from __future__ import annotations

import pytest
from hymem.search.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion


def test_item_ranked_well_by_both_beats_item_first_in_one() -> None:
    dense = ["a", "b", "c", "d"]
    lexical = ["e", "b", "f", "a"]
    fused = [item for item, _ in reciprocal_rank_fusion([dense, lexical])]
    assert fused[0] == "b"  # 2nd + 2nd beats 1st + nothing
    assert fused.index("a") < fused.index("e")


def test_scores_follow_the_formula() -> None:
    fused = dict(reciprocal_rank_fusion([["x", "y"], ["y"]], k=10))
    assert fused["x"] == pytest.approx(1 / 11)
    assert fused["y"] == pytest.approx(1 / 12 + 1 / 11)


def test_weights_scale_each_ranking() -> None:
    fused = dict(reciprocal_rank_fusion([["x"], ["y"]], k=1, weights=[2.0, 1.0]))
    assert fused["x"] == pytest.approx(1.0)
    assert fused["y"] == pytest.approx(0.5)


def test_ties_are_deterministic_best_rank_then_id() -> None:
    # "b" and "a" tie on score; equal best rank too, so id order decides.
    out = reciprocal_rank_fusion([["b", "a"], ["a", "b"]])
    assert [i for i, _ in out] == ["a", "b"]
    # the same symmetric tie resolves the same way whatever the input order
    out = reciprocal_rank_fusion([["z", "q"], ["q", "z"]], k=DEFAULT_RRF_K)
    assert [i for i, _ in out] == ["q", "z"]
    # an unequal score is never overridden by the tie-breakers
    out = reciprocal_rank_fusion([["z", "q"], ["z"]])
    assert [i for i, _ in out] == ["z", "q"]


def test_duplicates_within_one_ranking_count_once() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "a", "b"]], k=1))
    assert fused["a"] == pytest.approx(0.5)
    assert fused["b"] == pytest.approx(1 / 4)


def test_empty_inputs() -> None:
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=0)
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0])
