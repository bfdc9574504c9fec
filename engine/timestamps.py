"""Turn every timestamp hymem accepts into one naive `datetime`.

Accepted inputs, tried in this order:

* `datetime` (tz-aware ones are converted to UTC, then made naive) and `date` (midnight);
* epoch seconds as `int`/`float` (UTC; booleans are refused, not read as 0/1);
* ISO 8601 strings (`2023-05-08`, `2023-05-08T13:56:00`, `...Z`, `...+02:00`);
* LoCoMo's session stamps, e.g. `"1:56 pm on 8 May, 2023"`;
* a few other absolute forms (`"8 May 2023"`, `"May 8, 2023 13:56"`) through `dateparser` with
  relative parsing switched off, so `"yesterday"` is an error rather than a date that depends on
  when the code happened to run (English month names only: detecting the language of a
  date string costs seconds on the first call).

Anything else raises `UserInputError`. Naive inputs are taken as the conversation's own clock.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime

from hymem.errors import UserInputError

# "1:56 pm on 8 May, 2023" / "10:37 am on 27 June, 2023" (LoCoMo session_N_date_time)
_LOCOMO = re.compile(
    r"^\s*(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap]\.?m\.?)\s+on\s+"
    r"(?P<d>\d{1,2})\s+(?P<mon>[A-Za-z]+),?\s+(?P<y>\d{4})\s*$",
    re.IGNORECASE,
)
_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
# Anything that needs "now" to resolve is refused: turns must carry their own time.
_DATEPARSER_SETTINGS = {
    "PARSERS": ["custom-formats", "absolute-time"],
    "REQUIRE_PARTS": ["day", "month", "year"],
    "RETURN_AS_TIMEZONE_AWARE": False,
}


def to_naive_utc(value: datetime) -> datetime:
    """Aware datetimes become UTC wall-clock time; naive ones are kept as they are."""
    if value.tzinfo is not None and value.utcoffset() is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value.replace(tzinfo=None)


def parse_locomo_datetime(text: str) -> datetime | None:
    """LoCoMo's "1:56 pm on 8 May, 2023"; None when the text has another shape."""
    m = _LOCOMO.match(text)
    if m is None:
        return None
    month = _MONTHS.get(m["mon"].lower())
    hour, minute = int(m["h"]), int(m["m"])
    if month is None or not 1 <= hour <= 12:
        return None
    if m["ampm"].lower().startswith("p") and hour != 12:
        hour += 12
    elif m["ampm"].lower().startswith("a") and hour == 12:
        hour = 0
    try:
        return datetime(int(m["y"]), month, int(m["d"]), hour, minute)
    except ValueError:
        return None


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
        return to_naive_utc(datetime.fromisoformat(iso))
    except ValueError:
        pass
    found = parse_locomo_datetime(stripped)
    if found is not None:
        return found
    import dateparser  # slow to import; only reached by unusual formats

    parsed = dateparser.parse(stripped, languages=["en"], settings=_DATEPARSER_SETTINGS)
    if parsed is None:
        raise UserInputError(f"unparseable timestamp {text!r}")
    return to_naive_utc(parsed)


def parse_timestamp(value: object) -> datetime:
    """Parse one timestamp (see the module docstring); raises UserInputError when it cannot."""
    if isinstance(value, datetime):
        return to_naive_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, bool):
        raise UserInputError("timestamp must not be a boolean")
    if isinstance(value, int | float):
        return _from_epoch(float(value))
    if isinstance(value, str):
        return _from_string(value)
    raise UserInputError(f"unsupported timestamp type {type(value).__name__}")


def format_line_time(value: datetime) -> str:
    """The `YYYY-MM-DD HH:MM` stamp that prefixes every segment line."""
    return value.strftime("%Y-%m-%d %H:%M")
