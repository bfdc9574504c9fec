"""LoCoMo's own formats, kept out of the core: its session stamps ("1:56 pm on 8 May, 2023").

The core parses general absolute dates (`hymem.time`); this strict parser exists so the
harness reads LoCoMo's stamps exactly, without going through dateparser's heuristics."""

from __future__ import annotations

import re
from datetime import datetime

from hymem.time import parse_timestamp

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


def parse_session_time(text: str) -> datetime:
    """A LoCoMo session stamp, or any timestamp hymem accepts; UserInputError otherwise."""
    found = parse_locomo_datetime(text) if isinstance(text, str) else None
    return found if found is not None else parse_timestamp(text)


__all__ = ["parse_locomo_datetime", "parse_session_time"]
