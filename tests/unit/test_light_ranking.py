"""Issue #29: the light path's pure parts, anchors (`hymem.search.anchors`) and the fused,
budget-filled light ranking (`hymem.search.light`), as general rules."""

from __future__ import annotations

import pytest
from hymem.core.types import Hit, Level
from hymem.search.anchors import Anchors, capitalised, find_anchors
from hymem.search.light import Candidate, fill_tokens, light_ranking


def _hit(i: str, text: str, turns: list[str], segment: str = "g") -> Hit:
    return Hit(
        level=Level.SUMMARY, id=i, user_id="u", text=text, segment_id=segment, turn_ids=turns
    )


@pytest.mark.parametrize(
    ("question", "names", "aspect"),
    [
        (
            "What activities has Melanie done with her family?",
            ("Melanie",),
            "What activities has done with her family?",
        ),
        (
            "Which books has John recommended to James?",
            ("John", "James"),
            "Which books has recommended to",
        ),
        ("What did Caroline's sister paint?", ("Caroline",), "What did sister paint?"),
    ],
)
def test_a_name_most_candidates_share_is_an_anchor_and_leaves_the_aspect(
    question: str, names: tuple[str, ...], aspect: str
) -> None:
    candidates = [f"{n} said something about topic {i}" for i in range(4) for n in names]
    found = find_anchors(question, candidates)
    assert found.names == names and found.aspect == aspect


def test_a_rare_capitalised_word_and_the_first_word_are_not_anchors() -> None:
    candidates = ["Ann went to Paris", "Ann likes tea", "Ann runs", "Bo met Ann in Rome"]
    found = find_anchors("When did Ann visit Rome?", candidates)
    assert found.names == ("Ann",)  # Rome is in 1 of 4: it discriminates, so it stays
    assert find_anchors("Ann?", candidates).names == ()  # the first word is never one
    assert find_anchors("What about Al?", ["also this", "all of it"]).names == ()  # whole words


def test_no_anchor_leaves_the_question_whole() -> None:
    assert find_anchors("what is due on friday?", ["x"]) == Anchors((), "what is due on friday?")
    assert find_anchors("What about Bo?", []) == Anchors((), "What about Bo?")


def test_the_guess_before_searching_takes_every_capitalised_word() -> None:
    guess = capitalised("Did Ann and Bo's dog meet Cy?")
    assert guess.names == ("Ann", "Bo", "Cy") and guess.aspect == "Did and dog meet"


def test_anchors_match_whole_words_in_any_case() -> None:
    anchors = Anchors(("Mel",), "")
    assert anchors.named_in("mel went out") and anchors.named_in("Mel's cat")
    assert not anchors.named_in("Melanie went out")


def test_fill_reads_by_rank_within_the_budget_and_skips_repeated_sources() -> None:
    ranked = [
        (_hit("a", "one two three", ["t1"]), 0.9),
        (_hit("b", "again about t1", ["t1"]), 0.8),  # adds no source turn: skipped
        (_hit("c", "four five", ["t2"]), 0.7),
        (_hit("d", "six seven eight nine", ["t3"]), 0.6),  # would pass 6 tokens: stop
        (_hit("e", "ten", ["t4"]), 0.5),
    ]
    words = lambda text: len(text.split())  # noqa: E731 - a token count for the test
    read = fill_tokens(ranked, 6, words)
    assert [h.id for h in read] == ["a", "c"]
    assert [h.fused_score for h in read] == [0.9, 0.7]
    assert [h.id for h in fill_tokens([(_hit("x", "w " * 9, ["t9"]), 1.0), *ranked], 3, words)] == [
        "a"
    ]  # a first hit over the budget alone is skipped, not read whole


def _candidates(texts: dict[str, str], segment_of: dict[str, str]) -> list[Candidate]:
    return [Candidate(i, text, segment_of.get(i, "")) for i, text in texts.items()]


def test_the_light_rank_fuses_segments_aspect_and_the_anchor_named() -> None:
    segment_of = {"s1": "g1", "s2": "g2"}
    texts = {"s1": "Bo likes tea", "s2": "Ann likes art", "s3": "Ann paints with her kids"}
    hybrid = _candidates({i: texts[i] for i in ("s1", "s2")}, segment_of)
    aspect = _candidates({i: texts[i] for i in ("s3", "s1")}, segment_of)
    ranked = light_ranking(hybrid, ["g2"], aspect, Anchors(("Ann",), "paints"))
    # s3: first by aspect and first named; s1: first by the question and second by aspect;
    # s2: second by the question, its segment first (at half weight)
    assert [i for i, _ in ranked] == ["s3", "s1", "s2"]
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)


def test_a_summary_whose_segment_was_not_found_takes_no_segment_rank() -> None:
    hybrid = _candidates({"s1": "a", "s2": "b"}, {"s1": "g1", "s2": "g2"})
    ranked = dict(light_ranking(hybrid, ["g9"], [], Anchors((), "q")))
    assert ranked["s1"] > ranked["s2"]  # the hybrid order alone
