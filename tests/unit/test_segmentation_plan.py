"""Topic segmentation on hand-built similarity sequences (no embedder, no model)."""

from __future__ import annotations

import pytest
from hymem.write.segmentation import (
    Span,
    adjacent_similarities,
    attention_peak_boundaries,
    intersect_boundaries,
    local_peaks,
    plan_segments,
    similarity_boundaries,
)


def plan(sims, sessions=None, tokens=None, **kw):
    n = len(sims) + 1
    args = dict(tau=0.5, max_turns=100, max_tokens=10_000, overlap=0)
    args.update(kw)
    return plan_segments(
        sims=sims,
        session_ids=sessions or ["s"] * n,
        token_counts=tokens or [10] * n,
        **args,
    )


def cores(spans: list[Span]) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in spans]


def test_similarity_drop_below_tau_starts_a_segment() -> None:
    assert similarity_boundaries([0.9, 0.2, 0.8, 0.49, 0.5], 0.5) == {2, 4}
    assert cores(plan([0.9, 0.2, 0.8, 0.49, 0.5])) == [(0, 2), (2, 4), (4, 6)]


def test_no_drop_means_one_segment_and_empty_input_none() -> None:
    assert cores(plan([0.9, 0.8, 0.7])) == [(0, 4)]
    assert (
        plan_segments(sims=[], session_ids=[], token_counts=[], tau=0.5, max_turns=3, max_tokens=9)
        == []
    )


def test_session_change_is_always_a_boundary() -> None:
    spans = plan([0.99, 0.99, 0.99], sessions=["a", "a", "b", "b"])
    assert cores(spans) == [(0, 2), (2, 4)]


def test_max_turns_cuts_long_topics() -> None:
    assert cores(plan([0.9] * 6, max_turns=3)) == [(0, 3), (3, 6), (6, 7)]


def test_max_tokens_cuts_but_never_splits_a_turn() -> None:
    spans = plan([0.9] * 3, tokens=[40, 40, 300, 10], max_tokens=100)
    assert cores(spans) == [(0, 2), (2, 3), (3, 4)]


def test_overlap_adds_next_segments_first_turns_as_tail_within_session() -> None:
    spans = plan([0.9, 0.1, 0.9, 0.9, 0.1], sessions=list("aaaaab"), overlap=2)
    assert spans == [Span(0, 2, 4), Span(2, 5, 5), Span(5, 6, 6)]
    assert list(spans[0].all) == [0, 1, 2, 3] and list(spans[0].core) == [0, 1]


def test_overlap_is_bounded_by_the_next_segment() -> None:
    spans = plan([0.1, 0.1, 0.9], overlap=2)
    assert spans == [Span(0, 1, 2), Span(1, 2, 4), Span(2, 4, 4)]


def test_local_peaks_and_attention_boundaries() -> None:
    assert local_peaks([0.1, 0.5, 0.2, 0.2, 0.7]) == {1, 4}
    assert local_peaks([None, None, 0.3, 0.9, 0.1, 0.4]) == {3, 5}
    assert attention_peak_boundaries([None, None, 0.3, 0.9, 0.1, 0.2, 0.1]) == {3, 5}


def test_intersection_keeps_attention_peaks_confirmed_by_nearby_similarity_drop() -> None:
    sims = [0.9, 0.9, 0.2, 0.9, 0.9, 0.9, 0.9]  # drop -> boundary at 3
    assert intersect_boundaries({3, 6}, sims, 0.5, tolerance=0) == {3}
    assert intersect_boundaries({4, 6}, sims, 0.5, tolerance=1) == {4}
    assert intersect_boundaries({4}, sims, 0.5, tolerance=0) == set()


def test_attention_intersected_with_similarity_in_plan() -> None:
    sims = [0.9, 0.2, 0.9, 0.2, 0.9]  # similarity alone: boundaries 2 and 4
    assert cores(plan(sims)) == [(0, 2), (2, 4), (4, 6)]
    # attention only confirms the second: the first drop is vetoed
    assert cores(plan(sims, attention={4}, tolerance=0)) == [(0, 4), (4, 6)]
    # session changes still cut even when attention sees no boundary
    assert cores(plan(sims, sessions=list("aaabbb"), attention=set())) == [(0, 3), (3, 6)]


def test_adjacent_similarities_of_unit_vectors() -> None:
    sims = adjacent_similarities([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert sims == pytest.approx([1.0, 0.0])


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError):
        plan_segments(
            sims=[0.1], session_ids=["a"], token_counts=[1], tau=0.5, max_turns=3, max_tokens=9
        )
    with pytest.raises(ValueError):
        plan([0.1], overlap=3)


def test_attention_boundaries_are_off_without_a_compressor() -> None:
    from hymem.write.compression import attention_boundaries

    assert attention_boundaries(None, ["a", "b", "c", "d"]) is None
