"""Timestamp parsing into naive datetimes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hymem.backfill.locomo import parse_locomo_datetime
from hymem.core.errors import UserInputError
from hymem.core.time import format_line_time, parse_timestamp


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37)),
        ("12:05 am on 1 Jan, 2024", datetime(2024, 1, 1, 0, 5)),
        ("12:30 pm on 9 September, 2023", datetime(2023, 9, 9, 12, 30)),
        ("2023-05-08T13:56:00", datetime(2023, 5, 8, 13, 56)),
        ("2023-05-08", datetime(2023, 5, 8)),
        ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56)),
        ("2023-05-08T15:56:00+02:00", datetime(2023, 5, 8, 13, 56)),
        ("8 May 2023", datetime(2023, 5, 8)),
        (0, datetime(1970, 1, 1)),
        (1683554160.0, datetime(2023, 5, 8, 13, 56)),
        (date(2023, 5, 8), datetime(2023, 5, 8)),
        (datetime(2023, 5, 8, 13, 56), datetime(2023, 5, 8, 13, 56)),
        (
            datetime(2023, 5, 8, 8, 56, tzinfo=timezone(timedelta(hours=-5))),
            datetime(2023, 5, 8, 13, 56),
        ),
        (datetime(2023, 5, 8, 13, 56, tzinfo=UTC), datetime(2023, 5, 8, 13, 56)),
    ],
)
def test_accepted_forms(raw: object, expected: datetime) -> None:
    got = parse_timestamp(raw)
    assert got == expected and got.tzinfo is None


@pytest.mark.parametrize(
    "raw", ["", "   ", "soon", "yesterday", "2 days ago", True, None, [2023], float("nan"), 1e20]
)
def test_refused_forms(raw: object) -> None:
    with pytest.raises(UserInputError):
        parse_timestamp(raw)


def test_locomo_parser_rejects_impossible_dates() -> None:
    assert parse_locomo_datetime("1:56 pm on 31 February, 2023") is None
    assert parse_locomo_datetime("13:56 pm on 8 May, 2023") is None
    assert parse_locomo_datetime("8 May 2023") is None


def test_line_time_format() -> None:
    assert format_line_time(datetime(2023, 5, 8, 13, 56, 59)) == "2023-05-08 13:56"
