"""LoCoMo's own formats, kept out of the core: its session stamps ("1:56 pm on 8 May, 2023")
and the way its gold answers word relative dates ("the Friday before 15 July 2023").

The core parses general absolute dates (`hymem.core.time`); this strict parser exists so the
harness reads LoCoMo's stamps exactly, without going through dateparser's heuristics.

The core's extractive backend words "last Friday", said on Saturday 15 July 2023, as the
calendar day "14 July 2023" and "last week" as "the week of 1 May 2023". LoCoMo's annotators
wrote such dates against the session date instead ("the Friday before 15 July 2023", "the week
before 8 May 2023"), and token F1 rewards matching that wording. `locomo_date_phrasing` is that
wording, as a `DatePhrasing` hook; the LoCoMo runner opts into it (`--phrasing locomo`, its
default) and records the choice in the run's manifest and report, and `--phrasing general`
measures the core's own wording. Nothing in the core imports this module."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from hymem.core.time import parse_timestamp
from hymem.llm.extractive.temporal import DateMention, format_day

if TYPE_CHECKING:
    from hymem.core.config import MemoryConfig
    from hymem.embed.embedders import Embedder
    from hymem.llm.roles import Roles

Phrasing = Literal["locomo", "general"]

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


def locomo_date_phrasing(mention: DateMention) -> str | None:
    """LoCoMo's gold wording of "last/this/next <week|weekend|weekday>": against the day it
    was said ("the Friday before 15 July 2023", "the week of 8 May 2023", "the weekend after
    ..."); None (the core's calendar wording) for every other expression and for "this
    Friday", which LoCoMo also gives as a calendar day."""
    rel = mention.relative
    if rel is None or (mention.granularity == "day" and rel.direction == 0):
        return None
    word = {-1: "before", 0: "of", 1: "after"}[rel.direction]
    return f"the {rel.unit} {word} {format_day(rel.anchor)}"


def phrased_roles(config: MemoryConfig, embedder: Embedder, phrasing: Phrasing) -> Roles | None:
    """Extractive roles that word dates as LoCoMo's gold answers do, for `phrasing="locomo"`
    with the extractive backend; None otherwise (the core builds its own roles: a model
    follows its prompts, and "general" is the core's default)."""
    if phrasing != "locomo" or config.llm.strip() != "extractive":
        return None
    from hymem.llm.extractive.backend import ExtractiveRoles

    return ExtractiveRoles(
        embedder, cache_items=config.extractive_cache_items, date_phrasing=locomo_date_phrasing
    )


__all__ = [
    "Phrasing",
    "locomo_date_phrasing",
    "parse_locomo_datetime",
    "parse_session_time",
    "phrased_roles",
]
