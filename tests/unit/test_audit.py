"""The audit's pure checks (issue 30 item 4): support of a summary by its source turns,
duplicate clusters, contradictions and stale versions still served. Each rule has a case that
fails if the rule is broken."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hymem.core.types import SummaryRecord, SummaryStatus
from hymem.manage.audit import (
    AuditReport,
    UserAudit,
    claim_terms,
    contradictions,
    duplicate_clusters,
    stale_served,
    support_score,
)

from tests.fixtures_store import BASE_TIME, make_summary

CAROLINE = ["Caroline: I went to an LGBTQ support group yesterday, it was so powerful."]
MOVE = ["user: I just moved to Porto with my two kids."]


def _s(id_: str, text: str, **fields: object) -> SummaryRecord:
    return make_summary("u", id_, text, vector=[0.0], **fields)


# --- support_score -----------------------------------------------------------------------------


def test_a_restated_summary_is_fully_supported() -> None:
    assert support_score("Caroline went to an LGBTQ support group.", CAROLINE) == 1.0


def test_a_paraphrase_keeping_the_words_scores_high() -> None:
    """Other word order, inflections, number words, possessives and a framing verb."""
    text = "Caroline mentioned that the support groups she goes to are powerful."
    assert support_score(text, CAROLINE) == 1.0
    assert support_score("User's 2 kids moved to Porto with User.", MOVE) == 1.0


def test_an_invented_number_lowers_the_score() -> None:
    right = support_score("User moved to Porto with two kids.", MOVE)
    wrong = support_score("User moved to Porto with three kids.", MOVE)
    assert right == 1.0
    assert wrong == pytest.approx(4 / 5)  # user, move, porto, kid held; 3 invented


def test_invented_names_and_words_lower_the_score() -> None:
    assert support_score("Melanie ran 42 marathons in Tokyo.", CAROLINE) == 0.0
    assert support_score("Caroline went to an LGBTQ support group in Tokyo.", CAROLINE) < 1.0


def test_a_name_that_looks_like_a_function_word_is_still_a_claim() -> None:
    """ "Will" inside a sentence is a name: dropping it as the stop word "will" would hide it."""
    assert "will" in claim_terms("Caroline met Will at the support group.")
    assert support_score("Caroline met Will at the support group.", CAROLINE) < 1.0


def test_the_speaker_of_the_source_turns_supports_its_name() -> None:
    """First person is rewritten to the speaker ("I moved" -> "User moved")."""
    assert support_score("User moved to Porto.", MOVE) == 1.0
    assert support_score("The user moved to Porto.", MOVE) == 1.0
    assert support_score("Caroline went to a support group.", CAROLINE) == 1.0


def test_a_name_is_supported_only_by_its_own_speaker() -> None:
    """ "User" over Caroline's turns, or Caroline over the user's, was invented."""
    assert support_score("User went to a support group.", CAROLINE) == pytest.approx(3 / 4)
    assert support_score("Caroline moved to Porto.", MOVE) == pytest.approx(2 / 3)


def test_resolved_date_parts_count_as_supported() -> None:
    """The turns said "yesterday"; the summariser wrote the day from their timestamp."""
    assert support_score("Caroline went to a support group on 7 May 2023.", CAROLINE) == 1.0
    assert support_score("Caroline went to a support group on May 7, 2023.", CAROLINE) == 1.0
    assert support_score("Caroline went to a support group on Friday.", CAROLINE) == 1.0
    assert support_score("Caroline went to a support group in April 2023.", CAROLINE) == 1.0
    assert support_score("Caroline went to a support group (in 2019).", CAROLINE) == 1.0


def test_a_date_phrase_supports_only_its_date_parts() -> None:
    last_week = ["Caroline: I went to a support group last week."]
    text = "Caroline went to a support group the week of 19 February 2024."
    assert support_score(text, last_week) == 1.0
    assert support_score(text, CAROLINE) < 1.0  # "week" was never said


def test_numbers_outside_date_phrases_must_be_found() -> None:
    assert support_score("Caroline went to 7 support groups.", CAROLINE) < 1.0
    # a lone capitalised month is a name, not a date; a lowercase "may" is a verb
    assert support_score("Caroline went to a support group with May.", CAROLINE) < 1.0


def test_edges_of_the_score() -> None:
    assert support_score("It was so.", CAROLINE) == 1.0  # claims nothing
    assert support_score("Caroline went to a support group.", []) == 0.0
    assert 0.0 <= support_score("Caroline met Will in Tokyo.", CAROLINE) <= 1.0


# --- duplicate_clusters ------------------------------------------------------------------------


def test_the_same_fact_in_other_words_is_a_duplicate() -> None:
    recs = [_s("a", "User lives in Porto."), _s("b", "User moved to Porto."), _s("c", "Hi.")]
    assert duplicate_clusters(recs) == [["a", "b"]]


def test_the_same_words_in_another_order_are_a_duplicate() -> None:
    recs = [
        _s("b", "A puppy named Max was adopted by Melanie."),
        _s("a", "Melanie adopted a puppy named Max."),
        _s("c", "Melanie adopted a kitten named Max."),
    ]
    assert duplicate_clusters(recs) == [["a", "b"]]


def test_clusters_join_through_either_key() -> None:
    """a~b by their fact, b~c by their words: one cluster, not two."""
    recs = [
        _s("a", "User lives in Porto."),
        _s("b", "User moved to Porto."),
        _s("c", "Porto: user moved to it."),
        _s("d", "User lives in Lisbon."),
    ]
    assert duplicate_clusters(recs) == [["a", "b", "c"]]


def test_opposite_polarity_and_extra_detail_are_no_duplicates() -> None:
    recs = [
        _s("a", "User eats meat."),
        _s("b", "User does not eat meat."),
        _s("c", "User lives in Porto."),
        _s("d", "User lives in Porto with two kids."),
    ]
    assert duplicate_clusters(recs) == []


def test_only_active_summaries_are_duplicates() -> None:
    recs = [
        _s("a", "User lives in Porto."),
        _s("b", "User lives in Porto.", status=SummaryStatus.SUPERSEDED),
        _s("c", "User lives in Porto.", status=SummaryStatus.DELETED),
    ]
    assert duplicate_clusters(recs) == []


# --- contradictions ----------------------------------------------------------------------------


def test_two_active_values_of_one_fact_contradict() -> None:
    key = {"fact_key": "user|lives_in"}
    recs = [
        _s("p", "User lives in Porto.", **key),
        _s("l", "User lives in Lisbon.", **key),
        _s("w", "User works at Google.", fact_key="user|works_at"),
    ]
    assert contradictions(recs) == [["l", "p"]]


def test_agreeing_retired_unkeyed_or_multi_valued_summaries_do_not_contradict() -> None:
    key = {"fact_key": "user|lives_in"}
    recs = [
        _s("a", "User lives in Porto.", **key),
        _s("b", "User moved to Porto.", **key),  # the same value
        _s("c", "User lives in Lisbon.", status=SummaryStatus.SUPERSEDED, **key),
        _s("d", "User lives in Berlin."),  # no fact_key
        _s("e", "Melanie adopted a puppy named Max.", fact_key="melanie|pet:dog"),
        _s("f", "Melanie adopted a puppy named Rex.", fact_key="melanie|pet:dog"),
    ]
    assert contradictions(recs) == []


# --- stale_served ------------------------------------------------------------------------------


def test_active_versions_already_ended_are_stale() -> None:
    ended = BASE_TIME + timedelta(days=1)
    recs = [
        _s("ok", "User lives in Porto."),
        _s("ended", "User lives in Lisbon.", valid_to=ended),
        _s("replaced", "User works at Google.", superseded_by="newer"),
        _s("retired", "User lived in Rome.", status=SummaryStatus.SUPERSEDED, valid_to=ended),
    ]
    assert stale_served(recs) == ["ended", "replaced"]


# --- the report --------------------------------------------------------------------------------


def test_health_is_the_absence_of_every_structural_problem() -> None:
    clean = UserAudit(user_id="u", summaries=3, mean_support=0.2, unsupported=3)
    assert clean.healthy  # low support is reported, not judged
    # a duplicate is reported, not judged: a fresh ingest says things twice (issue 49, 14)
    assert UserAudit(user_id="u", duplicate_clusters=[["a", "b"]]).healthy
    assert not UserAudit(user_id="u", contradictions=[["a", "b"]]).healthy
    for field in ("stale_served", "unlinked_summaries", "unlinked_segments"):
        assert not UserAudit(user_id="u", **{field: ["a"]}).healthy
    report = AuditReport(users=[clean, UserAudit(user_id="v", stale_served=["x"])])
    dumped = report.model_dump()
    assert dumped["healthy"] is False
    assert [u["healthy"] for u in dumped["users"]] == [True, False]
    assert AuditReport().healthy
