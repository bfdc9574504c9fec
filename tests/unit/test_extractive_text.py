"""Text primitives and pronoun resolution of the extractive backend."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.llm.extractive.pronouns import (
    resolve_first_person,
    resolve_second_person,
    third_person,
)
from hymem.llm.extractive.text import (
    caption_of,
    parse_line,
    question_terms,
    short_names,
    split_sentences,
    stem,
    strip_captions,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("went", "go"),
        ("painting", "painted"),
        ("hiking", "hikes"),
        ("running", "run"),
        ("stories", "story"),
        ("classes", "class"),
        ("kids", "kid"),
        ("agencies", "agency"),
    ],
)
def test_stem_conflates_inflections(a: str, b: str) -> None:
    assert stem(a) == stem(b)


def test_stem_keeps_distinct_words_apart() -> None:
    assert stem("class") != stem("clay")
    assert stem("family") == "family"


def test_question_terms_drop_question_words_and_stopwords() -> None:
    assert question_terms("When did Caroline go to the LGBTQ support group?") == [
        stem("Caroline"),
        "go",
        "lgbtq",
        "support",
        "group",
    ]


def test_short_names_are_nicknames_only() -> None:
    assert short_names("What did Mel and her kids make?") == frozenset({"mel"})


def test_split_sentences_keeps_abbreviations_and_captions() -> None:
    text = "Hey Mel! I saw Dr. Smith yesterday. [shares a photo of a dog] Cool?"
    assert split_sentences(text) == [
        "Hey Mel!",
        "I saw Dr. Smith yesterday.",
        "[shares a photo of a dog]",
        "Cool?",
    ]
    assert split_sentences("  ") == []


def test_parse_line_reads_time_speaker_and_text() -> None:
    line = parse_line("[2023-05-08 13:56] Caroline: I went there: it was great")
    assert line.time == datetime(2023, 5, 8, 13, 56)
    assert line.speaker == "Caroline"
    assert line.text == "I went there: it was great"


def test_parse_line_without_parts() -> None:
    assert parse_line("just text").speaker is None
    assert parse_line("just text").time is None
    not_time = parse_line("[shares a photo of a cat] Melanie: nice")
    assert not_time.time is None
    assert "shares a photo of a cat" in not_time.text


def test_caption_found_and_stripped() -> None:
    text = "Look at this! [shares a photo of a sunset over a lake]"
    assert caption_of(text) == "a photo of a sunset over a lake"
    assert strip_captions(text) == "Look at this!"
    assert caption_of("no caption [here]") is None


@pytest.mark.parametrize(
    ("verb", "expected"),
    [("love", "loves"), ("go", "goes"), ("try", "tries"), ("am", "is"), ("went", "went")],
)
def test_third_person(verb: str, expected: str) -> None:
    assert third_person(verb) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I went to a support group.", "Caroline went to a support group."),
        ("I'm keen on counseling.", "Caroline is keen on counseling."),
        ("I really love my dog.", "Caroline really loves Caroline's dog."),
        ("It made me feel accepted.", "It made Caroline feel accepted."),
        ("I've been busy.", "Caroline has been busy."),
        ("I don't mind.", "Caroline doesn't mind."),
        ("I need some me-time.", "Caroline needs some me-time."),
    ],
)
def test_first_person_resolved_to_speaker(sentence: str, expected: str) -> None:
    assert resolve_first_person(sentence, "Caroline") == expected


def test_we_resolved_only_when_the_group_is_named() -> None:
    assert resolve_first_person("We went camping with the kids.", "Melanie") == (
        "Melanie and family went camping with the kids."
    )
    assert resolve_first_person("We went camping.", "Melanie") == "We went camping."


def test_second_person_resolved_where_it_addresses_the_listener() -> None:
    assert resolve_second_person("You'd be a great counselor!", "Caroline") == (
        "Caroline would be a great counselor!"
    )
    assert resolve_second_person("I'm so proud of you.", "Caroline") == (
        "I'm so proud of Caroline."
    )
    assert resolve_second_person("Your painting is lovely.", "Melanie") == (
        "Melanie's painting is lovely."
    )
    # generic "you" stays
    assert resolve_second_person("It makes you feel alive.", "Melanie") == (
        "It makes you feel alive."
    )
