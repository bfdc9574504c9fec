"""hymem's one time model: every instant it stores or compares is a *naive UTC* `datetime`.

* Aware datetimes are converted to UTC at the API edge (`to_utc`), then made naive.
* Naive datetimes are taken to be UTC already (never the machine's local time), so results do
  not depend on the time zone of the process that wrote or reads the store.
* Every `*_at` column, turn timestamp, search bound (`since`/`until`), `traces(since=)` and lock
  file stamp goes through this module.

Accepted timestamp inputs (`parse_timestamp`), tried in this order:

* `datetime` (converted as above) and `date` (midnight UTC);
* epoch seconds as `int`/`float` (booleans are refused, not read as 0/1);
* ISO 8601 strings (`2023-05-08`, `2023-05-08T13:56:00`, `...Z`, `...+02:00`);
* other absolute forms (`"8 May 2023"`, `"May 8, 2023 13:56"`, `"1:56 pm on 8 May, 2023"`)
  through `dateparser` with relative parsing switched off, so `"yesterday"` is an error rather
  than a date that depends on when the code happened to run (English month names only:
  detecting the language of a date string costs seconds on the first call).

Anything else raises `UserInputError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, date, datetime

from hymem.errors import UserInputError

# Anything that needs "now" to resolve is refused: turns must carry their own time.
_DATEPARSER_SETTINGS = {
    "PARSERS": ["custom-formats", "absolute-time"],
    "REQUIRE_PARTS": ["day", "month", "year"],
    "RETURN_AS_TIMEZONE_AWARE": False,
}
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
        raise UserInputError(f"datetime {value!r} is out of range once converted to UTC") from None


def to_utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else to_utc(value)


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
        return to_utc(datetime.fromisoformat(iso))
    except ValueError:
        pass
    if re.search(r"\d", stripped) is None:  # a date without a digit is relative or not a date
        raise UserInputError(f"unparseable timestamp {text!r}")
    import dateparser  # slow to import; only reached by non-ISO formats

    parsed = dateparser.parse(
        _ON.sub(" ", stripped), languages=["en"], settings=_DATEPARSER_SETTINGS
    )
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
    "format_line_time",
    "micros",
    "parse_timestamp",
    "to_utc",
    "to_utc_or_none",
    "try_parse_timestamp",
    "utcnow",
]
