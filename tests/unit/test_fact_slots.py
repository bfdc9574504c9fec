"""The fact reader: what a summary states as (subject, relation, value), and what it must not.

Precision comes first: every negative case here is a text whose fact, read wrongly, would make
it supersede a true summary.
"""

from __future__ import annotations

import pytest
from hymem.facts import Fact, extract_fact, read_fact
from hymem.facts.text import clean_value, digits, parse_number, strip_time
from hypothesis import given, settings
from hypothesis import strategies as st

POSITIVE: list[tuple[str, str, str, str]] = [
    # lives_in
    (
        "User just moved to Porto the week of 19 February 2024, the apartment is lovely.",
        "user",
        "lives_in",
        "porto",
    ),
    ("user: We live in Porto near the river.", "user", "lives_in", "porto"),
    ("User moved to Porto.", "user", "lives_in", "porto"),
    ("User relocated to Berlin last month.", "user", "lives_in", "berlin"),
    ("User lives in Lisbon.", "user", "lives_in", "lisbon"),
    ("User is living in Madrid now.", "user", "lives_in", "madrid"),
    ("User is based in Berlin.", "user", "lives_in", "berlin"),
    ("User's home is now in Porto.", "user", "lives_in", "porto"),
    ("User has been living in Berlin for 3 years.", "user", "lives_in", "berlin"),
    ("The user lives in New York City.", "user", "lives_in", "new york city"),
    ("User moved to a new apartment in Porto.", "user", "lives_in", "porto"),
    ("User lives in Porto, Portugal.", "user", "lives_in", "porto"),
    ("User moved back to Lisbon on 3 March 2024.", "user", "lives_in", "lisbon"),
    ("User's moved to Porto.", "user", "lives_in", "porto"),
    ("Caroline: I moved to Paris.", "caroline", "lives_in", "paris"),
    ("Melanie and family moved to Paris.", "melanie", "lives_in", "paris"),
    ("User lives in Rio de Janeiro.", "user", "lives_in", "rio de janeiro"),
    ("User, 34, lives in Porto.", "user", "lives_in", "porto"),  # the age in commas is not read
    # works_at
    ("User works at Globex as a designer.", "user", "works_at", "globex"),
    ("User works for Initech.", "user", "works_at", "initech"),
    ("user: I work at Globex.", "user", "works_at", "globex"),
    ("User got a job at Initech.", "user", "works_at", "initech"),
    ("User started a new job at Umbrella last week.", "user", "works_at", "umbrella"),
    ("User is employed by Acme Corp.", "user", "works_at", "acme corp"),
    ("User is now working at Hooli.", "user", "works_at", "hooli"),
    ("User joined Globex as a designer.", "user", "works_at", "globex"),
    ("User works at the Globex office in Porto.", "user", "works_at", "globex"),
    ("User works for The New York Times.", "user", "works_at", "new york times"),
    # job_title
    ("User works as a nurse at the hospital.", "user", "job_title", "nurse"),
    ("User was promoted to senior designer last week.", "user", "job_title", "senior designer"),
    ("User got promoted to manager.", "user", "job_title", "manager"),
    ("User got a job as a barista.", "user", "job_title", "barista"),
    ("User's job title is Senior Designer.", "user", "job_title", "senior designer"),
    ("Caroline: I work as a counselor.", "caroline", "job_title", "counselor"),
    # age
    ("User is 34 now, turned it on 29 February 2024.", "user", "age", "34"),
    ("User is 33.", "user", "age", "33"),
    ("User is thirty.", "user", "age", "30"),
    ("User turned thirty-four on 2 March 2024.", "user", "age", "34"),
    ("User just turned 40.", "user", "age", "40"),
    ("Caroline: I'm 34 years old.", "caroline", "age", "34"),
    ("User is a 29-year-old engineer.", "user", "age", "29"),
    ("User's age is 40.", "user", "age", "40"),
    ("User's 34.", "user", "age", "34"),
    ("Melanie celebrated her 50th birthday.", "melanie", "age", "50"),
    # favourites
    ("User's favourite band is still Radiohead.", "user", "favourite:band", "radiohead"),
    ("User's favorite color is blue.", "user", "favourite:colour", "blue"),
    ("user: My favourite food is pizza these days.", "user", "favourite:food", "pizza"),
    ("Radiohead is still User's favourite band.", "user", "favourite:band", "radiohead"),
    ("Pizza is User's favourite food.", "user", "favourite:food", "pizza"),
    ("User's favourite food is mac and cheese.", "user", "favourite:food", "mac and cheese"),
    ("User's favourite film is The Matrix.", "user", "favourite:movie", "matrix"),
    ("Caroline's all-time favourite book is Becoming.", "caroline", "favourite:book", "becoming"),
    (
        "User's favourite band is Radiohead and she saw them live.",
        "user",
        "favourite:band",
        "radiohead",
    ),
    # relationship
    ("User got engaged to Sam Smith last week.", "user", "relationship", "engaged:sam smith"),
    ("User's wife is Anna.", "user", "relationship", "married:anna"),
    ("User is married to John.", "user", "relationship", "married:john"),
    ("User is dating Mark.", "user", "relationship", "dating:mark"),
    ("User is dating a guy named Mark.", "user", "relationship", "dating:mark"),
    ("User has a boyfriend named Tom.", "user", "relationship", "dating:tom"),
    ("User's partner is Sam.", "user", "relationship", "partner:sam"),
    ("Caroline: My wife is Anna.", "caroline", "relationship", "married:anna"),
    ("User's husband John loves hiking.", "user", "relationship", "married:john"),
    ("User's girlfriend's name is Amy.", "user", "relationship", "dating:amy"),
    ("User broke up with her boyfriend.", "user", "relationship", "single"),
    ("User broke up with Tom.", "user", "relationship", "ended:tom"),
    ("User got divorced from John Smith.", "user", "relationship", "ended:john smith"),
    ("User split up.", "user", "relationship", "single"),
    ("User is single again.", "user", "relationship", "single"),
    ("User got divorced.", "user", "relationship", "single"),
    # counts
    ("User has two kids.", "user", "count:kids", "2"),
    ("User has 3 children.", "user", "count:kids", "3"),
    ("User has three cats.", "user", "count:cats", "3"),
    ("User has two cars.", "user", "count:cars", "2"),
    ("Melanie: I have three kids.", "melanie", "count:kids", "3"),
    ("Caroline's two young kids love the beach.", "caroline", "count:kids", "2"),
    ("User is a mother of three.", "user", "count:kids", "3"),
    ("Caroline: I'm a single mom of two.", "caroline", "count:kids", "2"),
    ("User has 3 kids with Anna.", "user", "count:kids", "3"),
    ("User's got twelve chickens.", "user", "count:chickens", "12"),
    # plans
    ("User is moving to Berlin next month.", "user", "plan:move", "berlin"),
    ("User plans to move to Berlin next year.", "user", "plan:move", "berlin"),
    ("User will move to Berlin.", "user", "plan:move", "berlin"),
    ("User has decided to move to Lisbon.", "user", "plan:move", "lisbon"),
]

PETS: list[tuple[str, str, str, str]] = [
    ("User's dog Biscuit loves the beach here.", "user", "pet:dog", "biscuit"),
    ("User has a dog named Max.", "user", "pet:dog", "max"),
    ("User adopted a kitten called Luna.", "user", "pet:cat", "luna"),
    ("User's cat's name is Luna.", "user", "pet:cat", "luna"),
    ("User's dog is named Biscuit.", "user", "pet:dog", "biscuit"),
    ("Caroline: Our dog Max is sweet.", "caroline", "pet:dog", "max"),
]


@pytest.mark.parametrize(("text", "subject", "relation", "value"), POSITIVE)
def test_reads_single_valued_facts(text: str, subject: str, relation: str, value: str) -> None:
    assert extract_fact(text) == Fact(subject, relation, value, multi=False)


@pytest.mark.parametrize(("text", "subject", "relation", "value"), PETS)
def test_pets_are_multi_valued(text: str, subject: str, relation: str, value: str) -> None:
    assert extract_fact(text) == Fact(subject, relation, value, multi=True)


NEGATIVE = [
    # the assistant's echo is not the user's statement
    "assistant: Congrats on the move to Porto!",
    "assistant: User works at Globex.",
    "assistant: You work at Globex.",
    # questions
    "Where do you live?",
    "User lives in Porto?",
    "Does User still work at Globex?",
    # negation
    "User doesn't live in Porto anymore.",
    "User no longer works at Globex.",
    "User lives in Porto, not Lisbon.",
    "User has no kids.",
    "User isn't married to John.",
    "User never moved to Berlin.",
    # hypotheticals, wishes, plans that are not decided
    "User is thinking about moving to Berlin.",
    "User might move to Berlin.",
    "User wants to move to Berlin.",
    "If User moves to Porto she will be happy.",
    "User would love to live in Paris.",
    "User may work at Globex.",
    "User could be 34.",
    "User hopes to work at Google.",
    "User applied for a job at Google.",
    # the past
    "User used to live in Lisbon.",
    "User lived in Lisbon.",
    "User was living in Lisbon.",
    "User grew up in Lisbon.",
    "User was born in Lisbon.",
    "User had two cars.",
    "User's favourite band was Radiohead.",
    "User worked at Globex.",
    # the future, for a current relation
    "User works at Globex starting next month.",
    "User works at Globex until March.",
    # a second value, or part-time values
    "User also works at Initech.",
    "User works part-time at Initech.",
    "User moved to Porto for the summer.",
    "User lives in Porto and Lisbon.",
    "User has lived in Paris, London and Rome.",
    "User works at Google and Meta.",
    # someone else's fact
    "User's sister moved to Porto.",
    "User's friend Anna lives in Porto.",
    "Caroline and Melanie live in Porto.",
    "Melanie: Caroline lives in Paris.",
    "User's son is 5.",
    "Caroline's daughter turned 5.",
    # no subject this reader trusts
    "I live in Porto.",
    "Yesterday User moved to Porto.",
    "She moved to Porto.",
    "Congrats on the move to Porto!",
    # not the relation at all
    "Caroline went to a LGBTQ support group on 7 May 2023.",
    "Melanie: I'm planning a camping trip with my kids next month.",
    "User moved to May's place.",
    "User is moving to a new apartment.",
    "User moved to a new apartment.",
    "User works from home.",
    "User works at night.",
    "User works for herself.",
    "User works at a hospital.",
    "User works as a team with Anna.",
    "User works as hard as anyone.",
    "User works as a volunteer at the shelter.",
    "User joined Melanie at the beach.",
    "User joined a gym.",
    "User quit Globex.",
    "User is from Lisbon.",
    "User's hometown is Lisbon.",
    "User is 5 minutes away.",
    "User is 6 feet tall.",
    "User is 3 months pregnant.",
    "User is 2 years into the job.",
    "User is one of the organisers.",
    "User turned 40 pages of her novel.",
    "Porto is 300 years old.",
    "User's favourite bands are Radiohead and Muse.",
    "One of User's favourite bands is Radiohead.",
    "It is User's favourite band.",
    "User loves Radiohead the most.",
    "User married young.",
    "User got married last year.",
    "User is married.",
    "User's husband is a teacher.",
    "User's wife is Irish.",
    "User's ex-husband is John.",
    "User's ex is John.",
    "User broke up the fight.",
    "User broke up with the band.",
    "User has 2 more kids.",
    "User has two new cats.",
    "User has 2 days off.",
    "User has a dog.",
    "User's dog loves the beach.",
    "User's dogs Max and Bella love the beach.",
    "User's dog Max died.",
    "User's late husband John loved hiking.",
    "User's husband Mark's mother is nice.",
    "User moved to Paris for a month.",
    "User lives in Paris part of the year.",
    "User moved to Berlin for a semester.",
    "User works as a nurse and a writer.",
    "Caroline: We are 34.",
    "Melanie: We have 20 kids in the class.",
    "User moved to " + "Porto " * 20,
    "",
    "   ",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_reads_no_fact(text: str) -> None:
    assert extract_fact(text) is None


@pytest.mark.parametrize("text", [case[0] for case in POSITIVE + PETS])
def test_the_assistant_saying_it_is_no_fact(text: str) -> None:
    assert extract_fact(text) is not None
    assert extract_fact("assistant: " + text) is None


@pytest.mark.parametrize("text", [case[0] for case in POSITIVE + PETS])
def test_the_same_text_as_a_question_is_no_fact(text: str) -> None:
    assert extract_fact(text.rstrip(".!") + "?") is None


@pytest.mark.parametrize(
    "text",
    [
        "User moved to Porto.",
        "User works at Globex.",
        "User is 34.",
        "User has two kids.",
        "User's favourite band is Radiohead.",
    ],
)
@pytest.mark.parametrize("tail", [" She might not stay.", " Or maybe not.", " Not really."])
def test_a_hedge_anywhere_in_the_text_blocks_the_fact(text: str, tail: str) -> None:
    assert extract_fact(text) is not None
    assert extract_fact(text + tail) is None


def test_first_person_needs_a_speaker_and_takes_its_name() -> None:
    assert extract_fact("I moved to Paris.") is None
    assert extract_fact("Caroline: I moved to Paris.") == Fact("caroline", "lives_in", "paris")
    assert extract_fact("User: I moved to Paris.") == Fact("user", "lives_in", "paris")


def test_a_named_subject_and_a_prefixed_first_person_meet() -> None:
    assert extract_fact("Caroline: I'm 34 years old.") == extract_fact("Caroline is 34.")
    assert extract_fact("user: We live in Porto.") == extract_fact("User lives in Porto.")


def test_we_reads_where_the_household_lives_but_not_one_person_s_facts() -> None:
    assert extract_fact("user: We moved to Porto.") == Fact("user", "lives_in", "porto")
    assert extract_fact("user: We work at Globex.") is None
    assert extract_fact("user: We are dating.") is None


def test_detail_is_what_the_text_adds_beyond_the_fact() -> None:
    reading = read_fact(
        "User just moved to Porto the week of 19 February 2024, the flat is lovely."
    )
    assert reading is not None
    assert {"19", "february", "2024", "flat", "lovely"} <= reading.detail
    assert "porto" not in reading.detail
    plain = read_fact("User lives in Porto.")
    assert plain is not None and plain.detail == frozenset()


def test_a_time_phrase_after_the_value_is_no_detail_worth_keeping_apart() -> None:
    a = read_fact("User's favourite band is Radiohead these days.")
    assert a is not None and a.detail == frozenset()


@pytest.mark.parametrize(
    ("text", "number"),
    [("34", 34), ("thirty-four", 34), ("thirty four", 34), ("twelve", 12), ("a hundred", 100)],
)
def test_number_words(text: str, number: int) -> None:
    assert parse_number(text) == number


def test_number_words_that_are_no_number() -> None:
    assert parse_number("thirty-ten") is None
    assert parse_number("lots") is None


def test_digits_rewrites_number_words() -> None:
    assert digits("has two kids and twenty-one cats") == "has 2 kids and 21 cats"


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("Radiohead these days", "Radiohead"),
        ("Porto the week of 19 February 2024", "Porto"),
        ("pizza now", "pizza"),
        ("Lisbon on 29 February 2024", "Lisbon"),
        ("Berlin last week", "Berlin"),
        ("Berlin since 2020", "Berlin"),
        ("Madrid in May 2023", "Madrid"),
        ("Paris for 3 years", "Paris"),
    ],
)
def test_trailing_time_phrases_leave_values(raw: str, value: str) -> None:
    assert strip_time(raw) == value


def test_clean_value_normalises() -> None:
    assert clean_value("The Matrix.") == "matrix"
    assert clean_value("  Two  Cats ") == "2 cats"


def test_same_value_however_written() -> None:
    a = extract_fact("User has two kids.")
    b = extract_fact("User has 2 kids.")
    c = extract_fact("User has 2 children now.")
    assert a == b == c == Fact("user", "count:kids", "2")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_reads_a_fact_or_none(text: str) -> None:
    fact = extract_fact(text)
    assert fact is None or (fact.subject and fact.relation and fact.value)


_NAMES = st.sampled_from(["Caroline", "Melanie", "User", "Anna", "Jon"])
_TEMPLATES = st.sampled_from(
    [
        "{} moved to Porto.",
        "{} works at Globex.",
        "{} is 34.",
        "{}'s favourite band is Radiohead.",
        "{} has two kids.",
        "{} is married to Sam.",
    ]
)


@given(_NAMES, _TEMPLATES)
def test_the_subject_is_the_name_that_opens_the_text(name: str, template: str) -> None:
    fact = extract_fact(template.format(name))
    assert fact is not None and fact.subject == name.lower()


def test_the_package_says_what_may_be_imported() -> None:
    import hymem.facts

    exported = set(hymem.facts.__all__)
    assert len(exported) == len(hymem.facts.__all__)  # ruff (RUF022) keeps the order
    assert all(hasattr(hymem.facts, name) for name in exported)
    public = (
        "Candidate DUP_COSINE Decision DecisionKind Fact Reading decide extract_fact fact_key "
        "read_fact"
    )
    assert exported == set(public.split())
