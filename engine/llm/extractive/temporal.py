"""Relative date expressions resolved against an anchor time (pure, no I/O).

Conversations say "yesterday", "last week" or "two days ago"; a memory read months later needs
the date those words meant when they were said. `find_relative_dates` locates such expressions
in a sentence and resolves each against the anchor (the line's or session's timestamp);
`rewrite_relative_dates` returns the sentence with them replaced.

Two renderings, because a speaker's granularity is part of the fact:

* ``"anchored"`` (default) keeps the granularity the speaker used and pins it to the anchor:
  "yesterday" -> "7 May 2023", "last week" -> "the week before 8 May 2023",
  "last Friday" -> "the Friday before 15 July 2023", "last month" -> "April 2023".
* ``"absolute"`` prefers calendar dates wherever one follows: "last Friday" -> "14 July 2023",
  "last week" -> "the week of 1 May 2023".

Expressions that are not relative ("in 2019", "on 3 June") are left alone, and so is anything
ambiguous; a wrong date is worse than a relative one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

Style = Literal["anchored", "absolute"]

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
}
_NUM_WORD_TO_TEXT = {
    v: k for k, v in _NUMBER_WORDS.items() if " " not in k and k not in ("a", "an")
}


@dataclass(frozen=True)
class DateMention:
    """One relative expression found in a text and what it resolves to."""

    start: int  # character span of the expression in the input text
    end: int
    text: str  # the expression as written, e.g. "last week"
    resolved: str  # its replacement in the chosen style, e.g. "the week before 8 May 2023"
    day: date | None  # the calendar day it denotes, when it denotes exactly one
    granularity: Literal["day", "week", "weekend", "month", "year", "span"]


def format_day(d: date | datetime) -> str:
    """LoCoMo-style day: '7 May 2023' (no leading zero, full month name)."""
    return f"{d.day} {d.strftime('%B')} {d.year}"


def format_month(d: date | datetime) -> str:
    return f"{d.strftime('%B')} {d.year}"


def _shift_months(d: date, months: int) -> date:
    index = d.year * 12 + (d.month - 1) + months
    return date(index // 12, index % 12 + 1, 1)


def _count(word: str) -> int | None:
    word = word.lower().strip()
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _count_text(n: int) -> str:
    return _NUM_WORD_TO_TEXT.get(n, str(n))


_NUM = (
    r"(?:\d{1,3}|a couple of|a couple|couple of|a few|several|an?|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve)"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WEEKDAY_ABBR = r"(?:mon|tues?|wed|thu|thurs?|fri|sat|sun)(?![a-z])"  # only after last/next/this
_PATTERN = re.compile(
    r"\b(?:"
    r"(?P<dby>the day before yesterday)"
    r"|(?P<dat>the day after tomorrow)"
    r"|(?P<yday>yesterday|last night)"
    r"|(?P<today>today|tonight|this (?:morning|afternoon|evening))"
    r"|(?P<tmrw>tomorrow)"
    rf"|(?P<ago_n>{_NUM}) (?P<ago_unit>days?|weeks?|weekends?|months?|years?) ago"
    r"|(?P<rel>last|this|next|this past|this coming) "
    rf"(?P<unit>week|weekend|month|year|{_WEEKDAY}|{_WEEKDAY_ABBR})"
    rf"|(?:on )?(?P<bare_day>{_WEEKDAY}) (?P<bare_rel>last|before last)"
    r")\b",
    re.IGNORECASE,
)


def _weekday_index(word: str) -> int:
    """Monday=0 from a full or abbreviated weekday name ("Fri", "tues")."""
    return [d[:3] for d in _WEEKDAYS].index(word.lower()[:3])


def _week_start(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _resolve(m: re.Match[str], anchor: date, style: Style) -> DateMention | None:
    g = m.groupdict()
    text = m.group(0)
    anchor_s = format_day(anchor)

    def day_mention(d: date) -> DateMention:
        return DateMention(m.start(), m.end(), text, format_day(d), d, "day")

    if g["dby"]:
        return day_mention(anchor - timedelta(days=2))
    if g["dat"]:
        return day_mention(anchor + timedelta(days=2))
    if g["yday"]:
        return day_mention(anchor - timedelta(days=1))
    if g["today"]:
        return day_mention(anchor)
    if g["tmrw"]:
        return day_mention(anchor + timedelta(days=1))
    if g["ago_n"]:
        return _resolve_ago(m, g["ago_n"], g["ago_unit"].lower().rstrip("s"), anchor)
    if g["bare_day"]:
        weekday = _weekday_index(g["bare_day"])
        back = 7 if g["bare_rel"].lower() == "before last" else 0
        return _weekday_mention(m, weekday, "last", anchor, style, extra_back=back)
    rel = g["rel"].lower()
    unit = g["unit"].lower()
    if unit not in ("week", "weekend", "month", "year"):
        return _weekday_mention(m, _weekday_index(unit), rel, anchor, style)
    direction = {"last": -1, "this past": -1, "next": 1, "this coming": 1}.get(rel, 0)
    if unit == "month":
        return DateMention(
            m.start(), m.end(), text, format_month(_shift_months(anchor, direction)), None, "month"
        )
    if unit == "year":
        return DateMention(m.start(), m.end(), text, str(anchor.year + direction), None, "year")
    word = {-1: "before", 0: "of", 1: "after"}[direction]
    if style == "absolute":
        if unit == "week":
            start = _week_start(anchor) + timedelta(days=7 * direction)
            return DateMention(
                m.start(), m.end(), text, f"the week of {format_day(start)}", None, "week"
            )
        saturday = _week_start(anchor) + timedelta(days=5 + 7 * direction)
        if direction == -1 and anchor.weekday() >= 5:
            saturday = _week_start(anchor) - timedelta(days=2)
        return DateMention(
            m.start(), m.end(), text, f"the weekend of {format_day(saturday)}", None, "weekend"
        )
    return DateMention(m.start(), m.end(), text, f"the {unit} {word} {anchor_s}", None, unit)  # type: ignore[arg-type]


def _resolve_ago(m: re.Match[str], count_word: str, unit: str, anchor: date) -> DateMention | None:
    text = m.group(0)
    n = _count(count_word)
    anchor_s = format_day(anchor)
    if n is None:  # "a few", "several": keep the vagueness, pin it to the anchor
        return DateMention(
            m.start(),
            m.end(),
            text,
            f"{count_word.lower()} {unit}s before {anchor_s}",
            None,
            "span",
        )
    if unit == "day":
        d = anchor - timedelta(days=n)
        return DateMention(m.start(), m.end(), text, format_day(d), d, "day")
    if unit in ("week", "weekend"):
        plural = unit if n == 1 else unit + "s"
        return DateMention(
            m.start(), m.end(), text, f"{_count_text(n)} {plural} before {anchor_s}", None, "span"
        )
    if unit == "month":
        month = format_month(_shift_months(anchor, -n))
        return DateMention(m.start(), m.end(), text, month, None, "month")
    # years: keep the duration (questions ask "how long ago") and add the year it points at
    return DateMention(m.start(), m.end(), text, f"{text} (in {anchor.year - n})", None, "year")


def _weekday_mention(
    m: re.Match[str], weekday: int, rel: str, anchor: date, style: Style, extra_back: int = 0
) -> DateMention:
    text = m.group(0)
    name = _WEEKDAYS[weekday].capitalize()
    if rel in ("last", "this past"):
        back = (anchor.weekday() - weekday) % 7 or 7
        d = anchor - timedelta(days=back + extra_back)
        word = "before"
    elif rel in ("next", "this coming"):
        d = anchor + timedelta(days=(weekday - anchor.weekday()) % 7 or 7)
        word = "after"
    else:  # "this Friday": the one in the anchor's week
        d = _week_start(anchor) + timedelta(days=weekday)
        word = "of the week of"
    if style == "absolute" or extra_back or rel == "this":
        return DateMention(m.start(), m.end(), text, format_day(d), d, "day")
    return DateMention(
        m.start(), m.end(), text, f"the {name} {word} {format_day(anchor)}", d, "day"
    )


def find_relative_dates(
    text: str, anchor: date | datetime, style: Style = "anchored"
) -> list[DateMention]:
    """Every relative date expression in `text`, resolved against `anchor`, in text order."""
    day = anchor.date() if isinstance(anchor, datetime) else anchor
    mentions: list[DateMention] = []
    for m in _PATTERN.finditer(text):
        mention = _resolve(m, day, style)
        if mention is not None:
            mentions.append(mention)
    return mentions


def rewrite_relative_dates(
    text: str, anchor: date | datetime | None, style: Style = "anchored"
) -> str:
    """`text` with each relative date replaced by its resolution; unchanged without an anchor.

    Day-precise expressions become "on 7 May 2023" unless a preposition already precedes them;
    periods keep their article ("the week before 8 May 2023")."""
    if anchor is None:
        return text
    out: list[str] = []
    pos = 0
    for mention in find_relative_dates(text, anchor, style):
        out.append(text[pos : mention.start])
        replacement = mention.resolved
        before = text[: mention.start].rstrip().lower()
        has_prep = re.search(r"\b(on|in|since|until|by|from|of|before|after|for)$", before)
        is_subject = re.match(r"\s+(?:was|is|has|had|will|would)\b", text[mention.end :])
        if (
            mention.granularity == "day"
            and not (has_prep or is_subject)
            and replacement[0].isdigit()
        ):
            replacement = "on " + replacement
        elif (
            mention.granularity in ("month", "year")
            and not has_prep
            and mention.text[0:4]
            in (
                "last",
                "next",
                "this",
            )
        ):
            replacement = "in " + replacement
        if mention.text[:1].isupper() and replacement[:1].islower():
            replacement = replacement[0].upper() + replacement[1:]
        out.append(replacement)
        pos = mention.end
    out.append(text[pos:])
    return "".join(out)


_ABSOLUTE_DATE = re.compile(
    r"\b(?:(?:the )?(?:(?:week|weekend|month|" + _WEEKDAY + r")s? (?:before|after|of)"
    r"|(?:(?:a )?\w+ )?(?:days?|weeks?|weekends?|months?|years?) before) )?"
    r"(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December),? \d{4}\b"
    r"|\b(?:19|20)\d{2}\b",
    re.IGNORECASE,
)


def find_date_phrase(text: str) -> str | None:
    """The first absolute (or anchored) date phrase in `text`, e.g. 'the week before 8 May 2023',
    '7 May 2023', 'June 2023' or '2022'; None when the text names no date."""
    m = _ABSOLUTE_DATE.search(text)
    if m is None:
        return None
    return m.group(0)
