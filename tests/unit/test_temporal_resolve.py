"""Relative dates resolved against an anchor: pure, no dateparser guessing at 'now'."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hymem.llm.extractive.temporal import (
    find_date_phrase,
    find_relative_dates,
    format_day,
    rewrite_relative_dates,
)
from hymem.time import try_parse_timestamp as parse_timestamp

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
        ("We went camping last week", "We went camping the week before 8 May 2023"),
        ("I painted it last year", "I painted it in 2022"),
        ("We go camping next month", "We go camping in June 2023"),
        ("I moved last month", "I moved in April 2023"),
        ("I ran a race last Saturday", "I ran a race the Saturday before 8 May 2023"),
        ("We hiked last weekend", "We hiked the weekend before 8 May 2023"),
        ("We hike this weekend", "We hike the weekend of 8 May 2023"),
        ("I moved here 4 years ago", "I moved here 4 years ago (in 2019)"),
        ("two weeks ago we met", "two weeks before 8 May 2023 we met"),
        ("We met a few days ago", "We met a few days before 8 May 2023"),
    ],
)
def test_rewrite_anchored(text: str, expected: str) -> None:
    assert rewrite_relative_dates(text, MON_8_MAY) == expected


def test_sentence_initial_expression_keeps_capital() -> None:
    assert rewrite_relative_dates("Last Fri I took my kids", SAT_15_JUL) == (
        "The Friday before 15 July 2023 I took my kids"
    )


def test_absolute_style_gives_calendar_days() -> None:
    assert rewrite_relative_dates("I ran last Friday", SAT_15_JUL, "absolute") == (
        "I ran on 14 July 2023"
    )
    assert rewrite_relative_dates("we met last week", MON_8_MAY, "absolute") == (
        "we met the week of 1 May 2023"
    )


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
    [m] = find_relative_dates("last Monday", MON_8_MAY, "absolute")
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
