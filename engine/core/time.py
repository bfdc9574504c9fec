"""hymem's one time model: every instant it stores or compares is a *naive UTC* `datetime`.

* Aware datetimes are converted to UTC at the API edge (`to_utc`), then made naive.
* Naive datetimes are taken to be UTC already (never the machine's local time), so results do
  not depend on the time zone of the process that wrote or reads the store.
* Every `*_at` column, turn timestamp, search bound (`since`/`until`), `traces(since=)` and lock
  file stamp goes through this module; every time argument a caller gives goes through
  `parse_time`, so each takes the same forms and the same value gets the same answer everywhere.

Accepted timestamp inputs (`parse_timestamp`), tried in this order:

* `datetime` (converted as above) and `date` (midnight UTC);
* epoch seconds as `int`/`float` (booleans are refused, not read as 0/1);
* ISO 8601 strings (`2023-05-08`, `2023-05-08T13:56:00`, `...Z`, `...+02:00`);
* other absolute forms (`"8 May 2023"`, `"May 8, 2023 13:56"`, `"1:56 pm on 8 May, 2023"`)
  through `dateparser` with relative parsing switched off, so `"yesterday"` is an error rather
  than a date that depends on when the code happened to run (English month names only:
  detecting the language of a date string costs seconds on the first call).

Anything else raises `UserInputError`, as does an instant outside `datetime`'s range (years
1..9999) once converted to UTC (`0001-01-01T00:00:00+14:00`): refused, never clamped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Annotated

from hymem.core.errors import UserInputError
from pydantic import AfterValidator, PlainSerializer

# Anything that needs "now" to resolve is refused: turns must carry their own time.
_DATEPARSER_SETTINGS = {
    "PARSERS": ["custom-formats", "absolute-time"],
    "REQUIRE_PARTS": ["day", "month", "year"],
    # aware, so an offset in the text is applied rather than dropped; text without one is UTC
    "RETURN_AS_TIMEZONE_AWARE": True,
    "TIMEZONE": "UTC",
}
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}(?!\d)")
_ON = re.compile(r"\bon\b", re.IGNORECASE)  # "1:56 pm on 8 May" -> dateparser reads "1:56 pm 8 May"


Clock = Callable[[], datetime]
"""What components take instead of calling `utcnow` themselves, so tests can fix "now"."""


def utcnow() -> datetime:
    """The current instant in hymem's model (naive UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_utc(value: datetime) -> datetime:
    """Aware datetimes become naive UTC; naive ones are already UTC by hymem's convention.

    Raises UserInputError for an aware value whose UTC form leaves datetime's range (e.g. an
    aware `datetime.max`)."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=None)
    try:
        return value.astimezone(UTC).replace(tzinfo=None)
    except OverflowError:
        raise UserInputError(
            f"datetime {value.isoformat()} is out of range once converted to UTC"
        ) from None


def to_utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else to_utc(value)


def marked_utc(value: datetime) -> datetime:
    """`value` as an aware UTC datetime: what hymem's naive UTC means, said explicitly."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


UtcDatetime = Annotated[
    datetime,
    AfterValidator(to_utc),
    PlainSerializer(marked_utc, return_type=datetime, when_used="json"),
]
"""A model field holding an instant: naive UTC in Python (what is stored and compared), and
ISO 8601 *with* its offset in JSON (`2026-11-28T06:52:26Z`), so no reader (JavaScript's
`Date` above all) takes it for local time. Aware values are converted when validated, so an
export written with offsets reads back as the same naive UTC values as one written without."""


def _from_epoch(value: float) -> datetime:
    if not math.isfinite(value):
        raise UserInputError(f"timestamp {value!r} is not a finite epoch number")
    try:
        return datetime.fromtimestamp(value, tz=UTC).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        raise UserInputError(f"epoch timestamp {value!r} is out of range") from None


def _from_string(text: str) -> datetime:
    stripped = text.strip()
    if not stripped:
        raise UserInputError("timestamp is an empty string")
    iso = stripped[:-1] + "+00:00" if stripped.endswith(("Z", "z")) else stripped
    try:
        parsed_iso = datetime.fromisoformat(iso)
    except ValueError:
        pass
    else:  # out of range once in UTC is refused here, never re-read by dateparser
        return to_utc(parsed_iso)
    if _ISO_DAY.match(stripped):  # "2024-13-01" is no date, not 13 January read the US way
        try:
            date.fromisoformat(stripped[:10])
        except ValueError:
            raise UserInputError(f"timestamp {text!r} is not a valid ISO 8601 date") from None
    if re.search(r"\d", stripped) is None:  # a date without a digit is relative or not a date
        raise UserInputError(f"unparseable timestamp {text!r}")
    import dateparser  # slow to import; only reached by non-ISO formats

    try:
        parsed = dateparser.parse(
            _ON.sub(" ", stripped), languages=["en"], settings=_DATEPARSER_SETTINGS
        )
    except OverflowError:  # dateparser moves the value to UTC itself
        raise UserInputError(f"timestamp {text!r} is out of range once converted to UTC") from None
    if parsed is None:
        raise UserInputError(f"unparseable timestamp {text!r}")
    return to_utc(parsed)


def parse_timestamp(value: object) -> datetime:
    """Parse one timestamp (see the module docstring); raises UserInputError when it cannot."""
    if isinstance(value, datetime):
        return to_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, bool):
        raise UserInputError("timestamp must not be a boolean")
    if isinstance(value, int | float):
        return _from_epoch(float(value))
    if isinstance(value, str):
        return _from_string(value)
    raise UserInputError(f"unsupported timestamp type {type(value).__name__}")


def parse_time(value: object, name: str) -> datetime:
    """The one rule for every time argument a caller gives (`add(timestamp=)` and each
    message's timestamp, `search(since=, until=, as_of=)`, `ask`/`context(as_of=)`,
    `traces(since=)`): any form `parse_timestamp` accepts, as naive UTC; anything else, or an
    instant outside year 1..9999 once in UTC, raises UserInputError naming the argument."""
    try:
        return parse_timestamp(value)
    except UserInputError as exc:
        raise UserInputError(f"{name}: {exc}") from None


def try_parse_timestamp(value: object) -> datetime | None:
    """`parse_timestamp`, or None where it would raise: for text that may hold no time."""
    try:
        return parse_timestamp(value)
    except UserInputError:
        return None


def format_line_time(value: datetime) -> str:
    """The `YYYY-MM-DD HH:MM` stamp that prefixes every segment line."""
    return value.strftime("%Y-%m-%d %H:%M")


def micros(value: datetime) -> int:
    """Integer microseconds since 1970 UTC (exact, unlike float timestamps)."""
    delta = to_utc(value) - datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


__all__ = [
    "Clock",
    "UtcDatetime",
    "format_line_time",
    "marked_utc",
    "micros",
    "parse_time",
    "parse_timestamp",
    "to_utc",
    "to_utc_or_none",
    "try_parse_timestamp",
    "utcnow",
]
