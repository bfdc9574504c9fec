"""Pure scoring helpers of the extractive backend, with a tiny fake embedder."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
from hymem.llm.extractive.answer import (
    Candidate,
    answers_type,
    compose_answer,
    extract_answer,
    generic_span,
    is_list_question,
    question_type,
)
from hymem.llm.extractive.scoring import (
    CachedEmbedder,
    coverage,
    jaccard,
    normalise_answer,
    rank,
    select_within_margin,
    term_weights,
    token_f1,
)
from hymem.llm.extractive.text import question_terms, stem

from tests.bag_embedder import BagEmbedder


class CountingEmbedder(BagEmbedder):
    """The bag-of-stems embedder over 32 dims; counts how many texts it was asked to embed."""

    dim = 32

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += len(texts)
        return super().embed(texts)


def test_coverage_counts_question_terms_with_stems_and_speaker() -> None:
    terms = question_terms("When did Caroline go to the support group?")
    assert coverage(terms, "Caroline went to the support group") == 1.0
    assert coverage(terms, "I went to the support group", extra=["Caroline"]) == 1.0
    assert coverage(terms, "the weather was nice") == 0.0
    assert coverage([], "anything") == 0.0


def test_nickname_covers_full_name_only_when_marked() -> None:
    terms = question_terms("What did Mel paint?")
    assert coverage(terms, "Melanie painted a sunset", short_names=frozenset({"mel"})) == 1.0
    assert coverage(terms, "Melanie painted a sunset") == 0.5


def test_term_weights_favour_rare_terms() -> None:
    texts = ["Caroline ran", "Caroline swam", "Caroline joined a charity race"]
    weights = term_weights([stem("Caroline"), stem("charity")], texts)
    assert weights[stem("charity")] > weights[stem("Caroline")]


def test_rank_and_margin_selection_are_deterministic() -> None:
    scores = [0.5, 0.9, 0.9, 0.85, 0.1, 0.2]
    assert rank(scores) == [1, 2, 3, 0, 5, 4]
    assert select_within_margin(scores, 0.1) == [1, 2, 3]
    assert select_within_margin([0.3, 0.3, 0.3, 0.3], 0.1) == [0, 1]  # at most half
    assert select_within_margin([0.2], 0.1) == [0]
    assert select_within_margin([], 0.1) == []


def test_token_f1_and_normalisation() -> None:
    assert normalise_answer("The Week, before 8 May!") == "week before 8 may"
    assert token_f1("7 May 2023", "7 May 2023") == 1.0
    assert token_f1("adoption agencies", "Adoption agency") == 1.0
    assert token_f1("15 July 2023", "The Friday before 15 July 2023") == pytest.approx(0.75)
    assert token_f1("", "x") == 0.0


def test_jaccard() -> None:
    assert jaccard("a b c", "a b c") == 1.0
    assert jaccard("a b", "c d") == 0.0


def test_cached_embedder_embeds_each_text_once_and_is_thread_safe() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_items=100)
    texts = [f"text number {i}" for i in range(20)]
    first = cached.embed(texts)
    threads = [threading.Thread(target=cached.embed, args=(texts,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    again = cached.embed(texts)
    assert inner.embedded == 20
    np.testing.assert_allclose(first, again)
    sims = cached.cosines("text number 3", texts)
    assert int(np.argmax(sims)) == 3


def test_cached_embedder_is_bounded() -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, max_items=5)
    cached.embed([f"t{i}" for i in range(10)])
    cached.embed(["t0"])  # evicted, embedded again
    assert inner.embedded == 11


@pytest.mark.parametrize(
    ("question", "qtype"),
    [
        ("When did Caroline go to the support group?", "when"),
        ("How long has she had her friends?", "how_long"),
        ("How many kids does Melanie have?", "how_many"),
        ("Where did Caroline move from?", "where"),
        ("Who performed at the concert?", "who"),
        ("Would Caroline move back?", "yesno"),
        ("What did Caroline research?", "what"),
    ],
)
def test_question_type(question: str, qtype: str) -> None:
    assert question_type(question) == qtype


def test_generic_span_returns_what_follows_the_predicate() -> None:
    assert generic_span(
        "What did Caroline research?", "Caroline researched adoption agencies."
    ) == ("adoption agencies")
    assert generic_span(
        "What did Melanie paint?", "Melanie shared a photo of a painting of a sunset over a lake."
    ) == ("sunset over a lake")
    # nothing new: the sentence itself
    assert generic_span("What did Caroline do?", "Caroline did.") == "Caroline did."


def test_extract_answer_by_type() -> None:
    said = Candidate("I moved from Sweden 4 years ago.", "s1", speaker="Caroline")
    assert extract_answer("Where did Caroline move from?", said) == "Sweden"
    assert extract_answer("How long ago did Caroline move?", said) == "4 years ago"
    kids = Candidate("Melanie has 3 kids who love dinosaurs.", "s2")
    assert extract_answer("How many kids does Melanie have?", kids) == "3 kids"
    met = Candidate("Caroline met Sarah Jones at the library.", "s3")
    assert extract_answer("Who did Caroline meet at the library?", met) == "Sarah Jones"


def test_what_noun_question_returns_the_noun_phrase() -> None:
    workshop = Candidate("Last Friday, I went to an LGBTQ+ counseling workshop and loved it.", "s")
    assert extract_answer("What workshop did Caroline attend?", workshop) == (
        "LGBTQ+ counseling workshop"
    )
    book = Candidate('I just finished the book "Becoming Nicole" last week.', "s")
    assert extract_answer("What book did Caroline read?", book) == '"Becoming Nicole"'
    country = Candidate("A gift from my grandma in my home country, Sweden.", "s")
    assert extract_answer("What country is Caroline's grandma from?", country) == "Sweden"


def test_yes_no_answered_only_when_the_sentence_covers_the_question() -> None:
    made = Candidate("Yeah, I made this bowl in pottery class.", "s", speaker="Melanie")
    assert extract_answer("Did Melanie make the bowl in pottery class?", made) == "Yes"
    never = Candidate("I never made a bowl in pottery class.", "s", speaker="Melanie")
    assert extract_answer("Did Melanie make the bowl in pottery class?", never) == "No"
    unrelated = Candidate("I love hiking in the mountains.", "s", speaker="Melanie")
    assert extract_answer("Did Melanie make the bowl in pottery class?", unrelated) not in (
        "Yes",
        "No",
    )


def test_when_answer_prefers_resolved_relative_date_then_line_date() -> None:
    from datetime import datetime

    t = datetime(2023, 6, 9, 10, 0)
    rel = Candidate("I gave a talk at a school last week.", "s", time=t, speaker="Caroline")
    assert extract_answer("When did Caroline give a talk?", rel) == "The week of 29 May 2023"
    plain = Candidate("I gave a talk at a school.", "s", time=t, speaker="Caroline")
    assert extract_answer("When did Caroline give a talk?", plain) == "9 June 2023"


def test_answers_type() -> None:
    assert answers_type("When did it happen?", "7 May 2023")
    assert not answers_type("When did it happen?", "at the park")
    assert answers_type("How many kids?", "three")
    assert not answers_type("What did she paint?", "")
    assert answers_type("What did she paint?", "a sunset")


def test_list_questions_gather_items_from_several_candidates() -> None:
    assert is_list_question("What activities does Melanie partake in?")
    assert is_list_question("What kind of books does Caroline like?")
    assert not is_list_question("What book did Caroline recommend?")
    assert not is_list_question("What is Caroline's identity?")
    cands = [
        Candidate("Melanie loves pottery.", "a", order=0),
        Candidate("Melanie loves camping.", "b", order=1),
        Candidate("Melanie loves camping.", "c", order=2),  # a duplicate answer is kept once
        Candidate("The weather was bad.", "d", order=3),
    ]
    scores = [(0.9, 0.9, 1.0), (0.85, 0.85, 1.0), (0.85, 0.85, 1.0), (0.1, 0.1, 0.0)]
    assert compose_answer("What activities does Melanie love?", cands, scores) == (
        "pottery, camping"
    )
    assert compose_answer("What activity does Melanie love most?", cands, scores) == "pottery"
