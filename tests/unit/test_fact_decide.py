"""The write-time decision: duplicate, supersede, stale or keep, for one new summary."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hymem.facts import DUP_COSINE, Candidate, Decision, decide
from hypothesis import given
from hypothesis import strategies as st

JAN = datetime(2024, 1, 10, 9, 0)
FEB = datetime(2024, 2, 10, 9, 0)
MAR = datetime(2024, 3, 10, 9, 0)


def cand(
    id_: str, text: str, when: datetime | None = None, vector: list[float] | None = None
) -> Candidate:
    return Candidate(id_, text, when, vector)


def unit(*xs: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in xs))
    return [x / norm for x in xs]


# --- supersede -------------------------------------------------------------------------------


def test_a_new_place_supersedes_the_old_one() -> None:
    d = decide(cand("n", "User moved to Porto.", MAR), [cand("a", "User lives in Lisbon.", JAN)])
    assert d == Decision("supersede", ("a",), "lives_in changed: lisbon → porto")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User works at Globex.", "User got a job at Initech."),
        ("User works as a designer.", "User was promoted to manager."),
        ("User is 33.", "User is 34 now."),
        ("User has two kids.", "User has three kids."),
        ("User's favourite band is Radiohead.", "User's favourite band is still Muse."),
        ("User is dating Sam.", "User got engaged to Sam."),
        ("User is dating Sam.", "User broke up with Sam."),
        ("User is dating Sam.", "User broke up with her boyfriend."),
        ("User broke up with Sam.", "User is dating Sam again."),
        ("User is single.", "User's girlfriend is Amy."),
        ("User plans to move to Berlin.", "User is moving to Munich next month."),
        ("Caroline: I'm 34 years old.", "Caroline turned 35."),
    ],
)
def test_every_single_valued_relation_supersedes(old: str, new: str) -> None:
    d = decide(cand("n", new, MAR), [cand("a", old, JAN)])
    assert d.kind == "supersede"
    assert d.target_ids == ("a",)


def test_a_breakup_with_someone_else_leaves_the_current_partner() -> None:
    d = decide(cand("n", "User broke up with Tom.", MAR), [cand("a", "User is dating Sam.", JAN)])
    assert d.kind == "keep"


def test_all_older_values_are_superseded_at_once() -> None:
    neighbours = [
        cand("a", "User lives in Lisbon.", JAN),
        cand("b", "User moved to Faro.", FEB),
        cand("c", "User's favourite band is Muse.", JAN),
    ]
    d = decide(cand("n", "User moved to Porto.", MAR), neighbours)
    assert d.kind == "supersede"
    assert d.target_ids == ("a", "b")
    assert d.reason == "lives_in changed: lisbon, faro → porto"


def test_equal_times_go_by_order_of_writing() -> None:
    d = decide(cand("n", "User moved to Porto.", JAN), [cand("a", "User lives in Lisbon.", JAN)])
    assert d.kind == "supersede"


@pytest.mark.parametrize(("old_when", "new_when"), [(None, JAN), (JAN, None), (None, None)])
def test_an_unknown_time_goes_by_order_of_writing(
    old_when: datetime | None, new_when: datetime | None
) -> None:
    d = decide(
        cand("n", "User moved to Porto.", new_when), [cand("a", "User lives in Lisbon.", old_when)]
    )
    assert d.kind == "supersede"


# --- stale -----------------------------------------------------------------------------------


def test_an_old_message_imported_late_is_stale() -> None:
    d = decide(cand("n", "User lives in Lisbon.", JAN), [cand("a", "User moved to Porto.", MAR)])
    assert d.kind == "stale"
    assert d.target_ids == ("a",)
    assert "porto" in d.reason and "lisbon" in d.reason


def test_stale_names_the_value_that_came_right_after() -> None:
    neighbours = [
        cand("late", "User lives in Faro.", MAR),
        cand("next", "User lives in Porto.", FEB),
    ]
    d = decide(cand("n", "User lives in Lisbon.", JAN), neighbours)
    assert d == Decision("stale", ("next",), d.reason)


def test_stale_beats_supersede() -> None:
    neighbours = [cand("old", "User lives in Faro.", JAN), cand("new", "User lives in Porto.", MAR)]
    d = decide(cand("n", "User lives in Lisbon.", FEB), neighbours)
    assert d.kind == "stale" and d.target_ids == ("new",)


def test_times_in_different_zones_compare_as_instants() -> None:
    # 10:00 at UTC+2 is 08:00 UTC: earlier than the neighbour's 09:00 UTC
    plus_two = timezone(timedelta(hours=2))
    new = cand("n", "User lives in Lisbon.", datetime(2024, 1, 10, 10, 0, tzinfo=plus_two))
    old = cand("a", "User moved to Porto.", datetime(2024, 1, 10, 9, 0, tzinfo=UTC))
    assert decide(new, [old]).kind == "stale"
    naive = cand("a", "User moved to Porto.", datetime(2024, 1, 10, 9, 0))  # naive is UTC
    assert decide(new, [naive]).kind == "stale"


# --- duplicate -------------------------------------------------------------------------------


def test_the_same_fact_adding_nothing_is_a_duplicate() -> None:
    old = cand(
        "a", "User just moved to Porto the week of 19 February 2024, the flat is lovely.", FEB
    )
    d = decide(cand("n", "User lives in Porto.", MAR), [old])
    assert d.kind == "duplicate" and d.target_ids == ("a",)
    assert d.reason.startswith("same fact") and d.reason.endswith("a")


def test_the_same_fact_with_more_detail_is_still_a_duplicate() -> None:
    # one fact, one active row: the caller keeps the more detailed text of the two
    old = cand("a", "User lives in Porto.", FEB)
    d = decide(cand("n", "User moved to Porto, the flat is lovely.", MAR), [old])
    assert d.kind == "duplicate" and d.target_ids == ("a",)
    assert d.reason == "same fact (user/lives_in: porto) as a"


def test_the_same_fact_in_other_clauses_is_a_duplicate() -> None:
    old = cand("a", "Nico's favourite band is Wilco.", FEB)
    new = cand("n", "Nico has moved on from Coldplay, Wilco is Nico's favourite band now.", MAR)
    d = decide(new, [old])
    assert d.kind == "duplicate" and d.target_ids == ("a",)


def test_a_newer_planned_trip_replaces_the_old_one() -> None:
    old = cand("a", "Cora: We're planning a trip to Kyoto in April.", JAN)
    d = decide(cand("n", "Cora booked flights to Lisbon for June.", FEB), [old])
    assert d == Decision("supersede", ("a",), "plan:trip changed: kyoto → lisbon")


def test_the_survivor_is_the_earliest_duplicate() -> None:
    neighbours = [
        cand("later", "User moved to Porto.", FEB),
        cand("undated", "User is based in Porto.", None),
        cand("first", "user: We live in Porto.", JAN),
    ]
    d = decide(cand("n", "User lives in Porto.", MAR), neighbours)
    assert d.kind == "duplicate" and d.target_ids == ("first",)


def test_pets_are_duplicates_but_never_supersede() -> None:
    neighbours = [cand("a", "User has a dog named Rex.", JAN)]
    assert decide(cand("n", "User has a dog named Max.", MAR), neighbours).kind == "keep"
    same = decide(cand("n", "User's dog is named Rex.", MAR), neighbours)
    assert same.kind == "duplicate" and same.target_ids == ("a",)


def test_texts_without_a_fact_with_the_same_words_are_duplicates() -> None:
    old = cand("a", "Caroline went to a LGBTQ support group on 7 May 2023.", JAN)
    d = decide(cand("n", "Caroline went to the LGBTQ support group on 7 May 2023!", FEB), [old])
    assert d.kind == "duplicate" and d.reason.startswith("same words")


def test_near_identical_vectors_with_the_same_names_and_numbers_are_duplicates() -> None:
    v = unit(1.0, 0.1, 0.0)
    w = unit(1.0, 0.12, 0.0)
    old = cand("a", "Melanie painted a sunset with her kids on 8 May 2023.", JAN, v)
    d = decide(
        cand("n", "Melanie painted a sunset together with her kids on 8 May 2023.", FEB, w), [old]
    )
    assert d.kind == "duplicate" and "cosine" in d.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User is 33.", "User is 34."),
        ("Melanie ran a 5k race on 8 May 2023.", "Melanie ran a 10k race on 8 May 2023."),
        ("Melanie went hiking with Caroline.", "Melanie went hiking with Anna."),
        ("Melanie enjoys painting.", "Melanie doesn't enjoy painting."),
    ],
)
def test_identical_vectors_never_merge_different_numbers_names_or_polarity(
    old: str, new: str
) -> None:
    v = unit(1.0, 0.0)
    d = decide(cand("n", new, FEB, v), [cand("a", old, JAN, v)])
    assert d.kind != "duplicate"


def test_33_and_34_is_a_change_not_a_duplicate() -> None:
    v = unit(1.0, 0.0)
    d = decide(cand("n", "User is 34.", FEB, v), [cand("a", "User is 33.", JAN, v)])
    assert d.kind == "supersede"


def test_below_the_threshold_is_no_duplicate() -> None:
    a = unit(1.0, 0.0)
    b = unit(math.cos(0.3), math.sin(0.3))  # cosine 0.955
    old = cand("a", "Melanie painted a sunset.", JAN, a)
    assert decide(cand("n", "Melanie painted a lake.", FEB, b), [old]).kind == "keep"
    assert decide(cand("n", "Melanie painted a sunset at dusk.", FEB, b), [old]).kind == "keep"
    looser = decide(cand("n", "Melanie painted a sunset at dusk.", FEB, b), [old], dup_cosine=0.95)
    assert looser.kind == "duplicate"
    assert 0.95 < DUP_COSINE < 1.0


def test_vectors_of_different_lengths_are_not_compared() -> None:
    old = cand("a", "Melanie painted a sunset.", JAN, [1.0, 0.0])
    new = cand("n", "Melanie painted a sunset at dusk.", FEB, [1.0, 0.0, 0.0])
    assert decide(new, [old]).kind == "keep"


# --- keep ------------------------------------------------------------------------------------


def test_different_subjects_never_interact() -> None:
    neighbours = [cand("a", "Melanie lives in Lisbon.", JAN), cand("b", "User lives in Faro.", JAN)]
    d = decide(cand("n", "Caroline moved to Porto.", MAR), neighbours)
    assert d.kind == "keep"


def test_different_relations_never_interact() -> None:
    d = decide(cand("n", "User works at Porto.", MAR), [cand("a", "User lives in Lisbon.", JAN)])
    assert d.kind == "keep"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User lives in New York.", "User lives in New York City."),
        ("User works as a designer.", "User was promoted to senior designer."),
        ("User is married to Anna.", "User's wife is Anna Smith."),
        ("User's favourite food is pizza.", "User's favourite food is pizza and pasta."),
    ],
)
def test_a_value_inside_the_other_is_left_for_sleep(old: str, new: str) -> None:
    assert decide(cand("n", new, MAR), [cand("a", old, JAN)]).kind == "keep"


@pytest.mark.parametrize(
    "new",
    [
        "User is thinking about moving to Berlin.",
        "User doesn't live in Porto anymore.",
        "assistant: Congrats on the move to Berlin!",
        "User used to live in Berlin.",
        "Where does User live?",
    ],
)
def test_statements_that_are_no_current_fact_supersede_nothing(new: str) -> None:
    d = decide(cand("n", new, MAR), [cand("a", "User lives in Porto.", JAN)])
    assert d.kind == "keep"


def test_the_new_summary_is_not_its_own_neighbour() -> None:
    new = cand("n", "User lives in Porto.", MAR)
    assert decide(new, [new]).kind == "keep"
    assert decide(new, []) == Decision("keep", (), "no neighbour holds another user/lives_in")


_NAMES = st.sampled_from(["Caroline", "Melanie", "User", "Anna"])
_FACTS = st.sampled_from(
    [
        "{} lives in Lisbon.",
        "{} moved to Porto.",
        "{} works at Globex.",
        "{} is 34.",
        "{} is 35.",
        "{} has two kids.",
        "{}'s favourite band is Muse.",
    ]
)


@given(_NAMES, _NAMES, _FACTS, _FACTS)
def test_property_different_subjects_never_interact(a: str, b: str, old: str, new: str) -> None:
    if a == b:
        return
    d = decide(cand("n", new.format(b), MAR), [cand("a", old.format(a), JAN)])
    assert d.kind == "keep"
