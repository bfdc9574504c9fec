"""LongMemEval's retrieval metrics against values computed by hand from the benchmark's own
definitions (official DCG form, ideal over the whole corpus, turn->session conversion)."""

from __future__ import annotations

import math

import pytest
from hymem.evaluation.longmemeval.data import load_longmemeval
from hymem.evaluation.longmemeval.metrics import (
    KS,
    corpus_of,
    dcg,
    distinct_sessions,
    evidence_of,
    ndcg,
    retrieval_scores,
    scores_at,
    session_k,
    strip_turn_index,
    turn_to_session_scores,
)

from tests.fixtures_lme import LME_MINI

LOG3 = math.log2(3)


def test_dcg_is_the_official_form_whose_first_two_ranks_weigh_one() -> None:
    # 1 + 1/log2(2) + 0/log2(3) + 1/log2(4) = 1 + 1 + 0 + 0.5
    assert dcg([1, 1, 0, 1], 4) == pytest.approx(2.5)
    assert dcg([1, 1, 0, 1], 2) == pytest.approx(2.0)
    assert dcg([], 5) == 0.0
    # Rank 2 is not discounted: a single hit at rank 2 scores NDCG 1.0, as the official code does.
    assert ndcg(["x", "a"], {"a"}, ["a", "x", "y"], 2) == pytest.approx(1.0)
    # ...while rank 3 is: 1/log2(3).
    assert ndcg(["x", "y", "a"], {"a"}, ["a", "x", "y"], 3) == pytest.approx(1 / LOG3)


def test_ndcg_ideal_counts_every_relevant_item_of_the_corpus() -> None:
    corpus = ["a", "b", "c", "d"]
    # ranked a, x, b with a and b relevant: (1 + 0 + 1/log2 3) / (1 + 1 + 0)
    assert ndcg(["a", "x", "b"], {"a", "b"}, corpus, 3) == pytest.approx((1 + 1 / LOG3) / 2)
    # Three relevant items, one retrieved: the ideal holds all three even though only one was
    # ranked. k=1: 1/1; k=3: 1 / (1 + 1 + 1/log2 3).
    assert ndcg(["a"], {"a", "b", "c"}, corpus, 1) == pytest.approx(1.0)
    assert ndcg(["a"], {"a", "b", "c"}, corpus, 3) == pytest.approx(1 / (2 + 1 / LOG3))
    # No relevant item in the corpus: 0, not a division by zero.
    assert ndcg(["a"], {"z"}, corpus, 3) == 0.0


def test_recall_is_over_the_set_of_the_top_k() -> None:
    s = retrieval_scores(["x", "a", "y", "b"], {"a", "b"}, ["a", "b", "x", "y"], 1)
    assert (s.recall_any, s.recall_all) == (0.0, 0.0)
    s = retrieval_scores(["x", "a", "y", "b"], {"a", "b"}, ["a", "b", "x", "y"], 2)
    assert (s.recall_any, s.recall_all) == (1.0, 0.0)
    s = retrieval_scores(["x", "a", "y", "b"], {"a", "b"}, ["a", "b", "x", "y"], 4)
    assert (s.recall_any, s.recall_all) == (1.0, 1.0)
    # A k past the ranking's end scores what there is.
    assert retrieval_scores(["a"], {"a", "b"}, ["a", "b"], 50).recall_all == 0.0


def test_strip_turn_index_keeps_underscores_inside_session_ids() -> None:
    assert strip_turn_index("answer_4be1b6b4_2_7") == "answer_4be1b6b4_2"
    assert strip_turn_index("s1_3") == "s1"
    assert distinct_sessions(["s1_1", "s2_4", "s1_2", "s3_1"]) == ["s1", "s2", "s3"]


def test_turn_ranking_scored_at_session_level_grows_k_to_k_sessions() -> None:
    ranked = ["s1_1", "s1_2", "s2_3", "s3_1", "s2_1"]
    corpus = ["s1_1", "s1_2", "s2_1", "s2_3", "s3_1"]
    stripped = [strip_turn_index(t) for t in ranked]
    # k=1: the top turn covers 1 session already; k=2: 2 turns cover only s1, so k grows to 3.
    assert session_k(stripped, 1, len(corpus)) == 1
    assert session_k(stripped, 2, len(corpus)) == 3
    at1 = turn_to_session_scores(ranked, {"s2"}, corpus, 1)
    assert (at1.recall_any, at1.recall_all, at1.ndcg) == (0.0, 0.0, 0.0)
    at2 = turn_to_session_scores(ranked, {"s2"}, corpus, 2)
    assert (at2.recall_any, at2.recall_all) == (1.0, 1.0)
    # NDCG over the first 3 turns, each carrying its session's relevance: [0, 0, 1];
    # the ideal from the stripped corpus [s1, s1, s2, s2, s3] -> [1, 1, 0] at k=3.
    assert at2.ndcg == pytest.approx((1 / LOG3) / 2)


def test_session_k_stops_when_the_corpus_is_exhausted() -> None:
    # One session's turns cannot cover 2 sessions: k grows past the corpus size and stops.
    assert session_k(["s1", "s1"], 2, 2) == 3
    assert session_k(["s1"], 2, 5) == 6


def test_scores_at_reports_every_metric_at_every_k() -> None:
    out = scores_at(["a", "x"], {"a"}, ["a", "x"])
    assert set(out) == {f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg") for k in KS}
    assert out["recall_any@1"] == 1.0 and out["ndcg@50"] == 1.0
    via_sessions = scores_at(["s1_2", "s2_1"], {"s2"}, ["s1_2", "s2_1"], turns_to_sessions=True)
    assert via_sessions["recall_any@1"] == 0.0 and via_sessions["recall_any@3"] == 1.0


def test_evidence_follows_the_benchmark_definitions() -> None:
    qs = {q.question_id: q for q in load_longmemeval(LME_MINI).questions}
    multi = evidence_of(qs["q_ms_02"])
    assert multi.sessions == {"answer_ms02_1", "answer_ms02_2"}
    assert multi.turns == {"answer_ms02_1_1", "answer_ms02_2_1"}
    # The answer is in an assistant turn: turn-level evidence, but the session's user turns
    # carry no has_answer, so the benchmark gives it no session-level evidence.
    assistant = evidence_of(qs["q_ssa_05"])
    assert assistant.turns == {"answer_ssa05_1_2"} and assistant.sessions == frozenset()
    turns, sessions = corpus_of(qs["q_ssa_05"])
    assert len(turns) == 12 and sessions[1] == "answer_ssa05_1"
