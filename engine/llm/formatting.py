"""How memories, passages and segments are laid out inside prompts.

Every item is shown with its dates (answers are relative to the conversation's own time, never
today's), and user-supplied text sits inside clearly delimited blocks, inserted verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from hymem.llm.extractive.temporal import find_relative_dates
from hymem.llm.roles import ContextItem, SegmentInput

NONE = "(none)"


def format_time(dt: datetime | None, *, weekday: bool = False) -> str:
    """ "8 May 2023, 13:56": day, month name, year -- unambiguous in every locale (unlike
    "05/08/2023") and the form the prompts ask models to write dates in."""
    if dt is None:
        return "date unknown"
    text = f"{dt.day} {dt:%B %Y}, {dt:%H:%M}"
    return f"{text} ({dt:%A})" if weekday else text


def format_asked_on(now: datetime | None) -> str:
    """When the question is asked, for prompts: a date with its weekday, or "not given"."""
    return format_time(now, weekday=True) if now is not None else "not given"


def format_span(start: datetime | None, end: datetime | None) -> str:
    if start is None and end is None:
        return "date unknown"
    if start is None or end is None or start == end:
        return format_time(start or end)
    if start.date() == end.date():
        return f"{format_time(start)} to {end:%H:%M}"
    return f"{format_time(start)} to {format_time(end)}"


def format_memories(items: Sequence[ContextItem]) -> str:
    """One line per short item: `- [id] (date) text`."""
    if not items:
        return NONE
    return "\n".join(
        f"- [{it.id}] ({format_span(it.time_start, it.time_end)}) {it.text.strip()}" for it in items
    )


def format_passages(items: Sequence[ContextItem]) -> str:
    """Multi-line raw dialogue passages, each in its own delimited block."""
    if not items:
        return NONE
    return "\n\n".join(
        f'<passage id="{it.id}" time="{format_span(it.time_start, it.time_end)}">\n'
        f"{it.text.strip()}\n</passage>"
        for it in items
    )


_LINE_TIME = re.compile(r"^\[(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2})")


def annotate_relative_dates(line: str, anchor: datetime | None) -> str:
    """`line` with each relative date followed by the date it meant, in brackets ("yesterday
    [7 May 2023]"), resolved against the line's own timestamp ("[2023-05-08 13:56] ...") or
    else `anchor`. The words stay as said; a small model copies the bracketed date instead of
    having to compute it (and a large one is spared the arithmetic)."""
    stamp = _LINE_TIME.match(line)
    if stamp is not None:
        anchor = datetime.fromisoformat(f"{stamp[1]}T{stamp[2]}:{stamp[3]}")
    if anchor is None:
        return line
    out: list[str] = []
    pos = 0
    for mention in find_relative_dates(line, anchor):
        out.append(line[pos : mention.end])
        out.append(f" [{mention.resolved}]")
        pos = mention.end
    out.append(line[pos:])
    return "".join(out)


def format_segments(segments: Sequence[SegmentInput]) -> str:
    """Buffer segments for the summariser, each with the session time that anchors its dates
    and its lines numbered from 1 (`#3 ...`), the numbers a fact's `turns` name; relative dates
    carry the date they meant (`annotate_relative_dates`)."""
    return "\n\n".join(
        f'<segment id="{seg.segment_id}" session_time="'
        f'{format_time(seg.session_time, weekday=True)}">\n'
        + "\n".join(
            f"#{n} {annotate_relative_dates(line.rstrip(), seg.session_time)}"
            for n, line in enumerate(seg.lines, 1)
        )
        + "\n</segment>"
        for seg in segments
    )


def format_pool(pool: Sequence[str]) -> str:
    """Answers from earlier reflection rounds."""
    answers = [a.strip() for a in pool if a and a.strip()]
    if not answers:
        return NONE
    return "\n".join(f"{i}. {a}" for i, a in enumerate(answers, 1))
