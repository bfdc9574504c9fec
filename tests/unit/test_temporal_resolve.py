"""Relative dates resolved against an anchor: pure, no dateparser guessing at 'now'.

The core's wording is the general one (calendar days and periods); LoCoMo's gold wording
("the Friday before 15 July 2023") is the evaluation's, tested in test_locomo_phrasing."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hymem.core.time import try_parse_timestamp as parse_timestamp
from hymem.llm.extractive.temporal import (
    DateMention,
    Relative,
    find_date_phrase,
    find_relative_dates,
    format_day,
    rewrite_relative_dates,
)

MON_8_MAY = datetime(2023, 5, 8, 13, 56)  # a Monday
SAT_15_JUL = datetime(2023, 7, 15, 10, 0)  # a Saturday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday.", "I went to a support group on 7 May 2023."),
        ("It rained today.", "It rained on 8 May 2023."),
        ("We watched a film last night", "We watched a film on 7 May 2023"),
        ("I am busy this week", "I am busy the week of 8 May 2023"),
        ("We fly tomorrow", "We fly on 9 May 2023"),
        ("I saw it two days ago", "I saw it on 6 May 2023"),
        ("I saw it 3 days ago", "I saw it on 5 May 2023"),
        ("the day before yesterday I ran", "on 6 May 2023 I ran"),
        ("We went camping last week", "We went camping the week of 1 May 2023"),
        ("I painted it last year", "I painted it in 2022"),
        ("We go camping next month", "We go camping in June 2023"),
        ("I moved last month", "I moved in April 2023"),
        ("I ran a race last Saturday", "I ran a race on 6 May 2023"),
        ("I ran a race on Saturday last", "I ran a race on 6 May 2023"),
        ("We meet this Friday", "We meet on 12 May 2023"),
        ("We meet next Friday", "We meet on 12 May 2023"),
        ("We met Friday before last", "We met on 28 April 2023"),
        ("We hiked last weekend", "We hiked the weekend of 6 May 2023"),
        ("We hike this weekend", "We hike the weekend of 13 May 2023"),
        ("We hike next week", "We hike the week of 15 May 2023"),
        ("I moved here 4 years ago", "I moved here 4 years ago (in 2019)"),
        ("two weeks ago we met", "two weeks before 8 May 2023 we met"),
        ("We met a few days ago", "We met a few days before 8 May 2023"),
    ],
)
def test_rewrite_general(text: str, expected: str) -> None:
    assert rewrite_relative_dates(text, MON_8_MAY) == expected


def test_sentence_initial_expression_keeps_capital() -> None:
    assert rewrite_relative_dates("Last Fri I took my kids", SAT_15_JUL) == (
        "On 14 July 2023 I took my kids"
    )


def test_default_wording_is_never_locomos_anchored_form() -> None:
    """The core gives calendar dates: "the Friday before 15 July 2023" is LoCoMo's wording and
    lives in the evaluation adapter (hymem.evaluation.locomo_format)."""
    text = "Last Friday we ran, last week we swam, next weekend we hike, this week we rest"
    out = rewrite_relative_dates(text, SAT_15_JUL)
    assert out == (
        "On 14 July 2023 we ran, the week of 3 July 2023 we swam, the weekend of 22 July 2023 "
        "we hike, the week of 10 July 2023 we rest"
    )
    assert " before " not in out and " after " not in out


def test_last_weekend_said_on_a_weekend_is_the_one_before() -> None:
    assert rewrite_relative_dates("We hiked last weekend", SAT_15_JUL) == (
        "We hiked the weekend of 8 July 2023"
    )


def test_phrasing_hook_rewords_and_falls_back() -> None:
    def shout(mention: DateMention) -> str | None:
        return mention.resolved.upper() if mention.granularity == "week" else None

    assert rewrite_relative_dates("we met last week and yesterday", MON_8_MAY, shout) == (
        "we met THE WEEK OF 1 MAY 2023 and on 7 May 2023"
    )


def test_relative_records_what_the_period_was_said_against() -> None:
    [week, friday, ago] = find_relative_dates("last week, next Fri, two days ago", SAT_15_JUL)
    assert week.relative == Relative("week", -1, date(2023, 7, 15))
    assert friday.relative == Relative("Friday", 1, date(2023, 7, 15))
    assert friday.day == date(2023, 7, 21)
    assert ago.relative is None


def test_subject_position_gets_no_preposition() -> None:
    assert rewrite_relative_dates("Yesterday was fun", MON_8_MAY) == "7 May 2023 was fun"


def test_no_anchor_and_no_expression_leave_text_unchanged() -> None:
    assert rewrite_relative_dates("I went yesterday", None) == "I went yesterday"
    assert rewrite_relative_dates("I moved in 2019 to Paris", MON_8_MAY) == (
        "I moved in 2019 to Paris"
    )


def test_mentions_report_span_and_day() -> None:
    [m] = find_relative_dates("Back from the lake yesterday!", MON_8_MAY)
    assert (m.start, m.end, m.text) == (19, 28, "yesterday")
    assert m.day == date(2023, 5, 7)
    assert m.granularity == "day"


def test_last_weekday_on_that_weekday_means_a_week_back() -> None:
    [m] = find_relative_dates("last Monday", MON_8_MAY)
    assert m.day == date(2023, 5, 1)


def test_year_boundary() -> None:
    assert rewrite_relative_dates("last month", datetime(2023, 1, 3)) == "in December 2022"
    assert rewrite_relative_dates("yesterday", datetime(2023, 1, 1)) == "on 31 December 2022"


def test_format_day_has_no_leading_zero() -> None:
    assert format_day(date(2023, 5, 7)) == "7 May 2023"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline went on 7 May 2023 and loved it", "7 May 2023"),
        ("Melanie went camping the week before 27 June 2023.", "the week before 27 June 2023"),
        ("Melanie went camping the week of 19 June 2023.", "the week of 19 June 2023"),
        ("We hiked the weekend of 6 May 2023", "the weekend of 6 May 2023"),
        ("She ran the Saturday before 25 May 2023", "the Saturday before 25 May 2023"),
        ("camping in June 2023", "June 2023"),
        ("painted it in 2022", "2022"),
        ("no date here", None),
    ],
)
def test_find_date_phrase(text: str, expected: str | None) -> None:
    assert find_date_phrase(text) == expected


def test_parse_timestamp_forms() -> None:
    assert parse_timestamp("2023-05-08 13:56") == MON_8_MAY
    assert parse_timestamp("1:56 pm on 8 May, 2023") == MON_8_MAY
    assert parse_timestamp("not a time") is None
    assert parse_timestamp("") is None
