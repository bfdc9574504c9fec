"""The paper's flat baselines: user turns only, whitespace BM25, dense and their RRF fusion."""

from __future__ import annotations

from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.longmemeval.data import load_longmemeval, parse_longmemeval
from hymem.evaluation.longmemeval.flat import (
    FlatIndex,
    Unit,
    bm25_order,
    flat_index,
    session_units,
    turn_units,
)
from hymem.search.fusion import reciprocal_rank_fusion

from tests.fixtures_lme import LME_MINI, lme_data


def question(qid: str):  # type: ignore[no-untyped-def]
    return {q.question_id: q for q in load_longmemeval(LME_MINI).questions}[qid]


def test_units_are_the_users_turns_only() -> None:
    q = question("q_ssa_05")
    turns = turn_units(q)
    assert [u.id for u in turns[:2]] == ["sharegpt_laptop_05_1", "sharegpt_laptop_05_3"]
    assert all(u.id.rsplit("_", 1)[1] in {"1", "3"} for u in turns)
    sessions = session_units(q)
    assert [u.id for u in sessions] == [
        "sharegpt_laptop_05",
        "answer_ssa05_1",
        "ultrachat_budget_05",
    ]
    raw = q.sessions[1].turns
    assert sessions[1].text == f"{raw[0].content} {raw[2].content}"
    assert "Alta Via" not in sessions[1].text  # the assistant's answer is not indexed


def test_empty_turns_are_not_indexed() -> None:
    data = lme_data()[:1]
    data[0]["haystack_sessions"][1][0]["content"] = ""
    q = parse_longmemeval(data).questions[0]
    assert "answer_ssu01_1_1" not in {u.id for u in turn_units(q)}
    assert session_units(q)[1].text == "He is ten weeks old and very playful."


def test_bm25_tokenises_on_spaces_like_the_paper() -> None:
    texts = ["my dog barks", "My Dog barks.", "cats purr", "dog", "birds sing", "fish swim"]
    order = bm25_order("dog", texts)
    # "Dog" is another token than "dog": whitespace split, case kept; the shorter match first.
    assert order[:2] == [3, 0]
    # Units without the word tie at zero and come later-first, as argsort(...)[::-1] orders them.
    assert order[2:] == [5, 4, 2, 1]
    assert bm25_order("dog", []) == []


def test_hybrid_is_the_rrf_of_dense_and_bm25() -> None:
    units = [
        Unit(id=f"u{i}", session_id="s", text=t, date=question("q_ssu_01").question_date)
        for i, t in enumerate(["golden retriever puppy food", "pasta with basil", "my new dog"])
    ]
    index = FlatIndex(units, HashingEmbedder(64), rrf_k=60)
    dense, lexical = index.rank("dense", "new dog food"), index.rank("bm25", "new dog food")
    fused = [i for i, _ in reciprocal_rank_fusion([dense, lexical], k=60)]
    assert index.rank("hybrid", "new dog food") == fused
    assert sorted(fused) == ["u0", "u1", "u2"]


def test_flat_index_ranks_the_evidence_of_the_fixture_first() -> None:
    q = question("q_ssu_01")
    index = flat_index(q, "turn", HashingEmbedder(256), 60)
    for ranker in ("bm25", "dense", "hybrid"):
        assert index.rank(ranker, "What breed is my new dog?")[0] == "answer_ssu01_1_1", ranker
