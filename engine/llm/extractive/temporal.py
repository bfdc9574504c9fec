"""Relative date expressions resolved against an anchor time (pure, no I/O).

Conversations say "yesterday", "last week" or "two days ago"; a memory read months later needs
the date those words meant when they were said. `find_relative_dates` locates such expressions
in a sentence and resolves each against the anchor (the line's or session's timestamp);
`rewrite_relative_dates` returns the sentence with them replaced.

The wording is the general one: a calendar day wherever one follows ("yesterday" -> "7 May
2023", "last Friday" -> "14 July 2023"), the calendar period otherwise ("last week" -> "the
week of 1 May 2023", weeks starting on Monday; "last month" -> "April 2023"), and vague spans
kept vague but pinned ("a few days ago" -> "a few days before 8 May 2023"). Days are written
day-month-year with the month's name ("7 May 2023"): unambiguous in every locale, unlike
"05/07/2023", and the form the prompts ask models to write, so extractive and model summaries
read alike.

A caller that needs another wording passes a `DatePhrasing`: it sees each `DateMention`
(including, for "last/this/next <week|weekend|weekday>", the `Relative` it was resolved from)
and returns its own replacement, or None to keep the general one. The LoCoMo evaluation uses
this to word such dates the way LoCoMo's gold answers do ("the Friday before 15 July 2023");
that wording lives in `hymem.evaluation.locomo_format`, not here.

Expressions that are not relative ("in 2019", "on 3 June") are left alone, and so is anything
ambiguous; a wrong date is worse than a relative one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

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
class Relative:
    """What "last/this/next <week|weekend|weekday>" was said relative to: the unit, the
    direction from the anchor, and the anchor day. Lets a `DatePhrasing` word the date against
    the anchor ("the week before 8 May 2023") instead of as the calendar period."""

    unit: str  # "week", "weekend" or a capitalised weekday name ("Friday")
    direction: Literal[-1, 0, 1]  # last, this, next
    anchor: date


@dataclass(frozen=True)
class DateMention:
    """One relative expression found in a text and what it resolves to."""

    start: int  # character span of the expression in the input text
    end: int
    text: str  # the expression as written, e.g. "last week"
    resolved: str  # its general replacement, e.g. "the week of 1 May 2023"
    day: date | None  # the calendar day it denotes, when it denotes exactly one
    granularity: Literal["day", "week", "weekend", "month", "year", "span"]
    relative: Relative | None = None  # set for last/this/next week, weekend or weekday


DatePhrasing = Callable[[DateMention], str | None]
"""A rewording hook: the replacement text for a mention, or None to keep `mention.resolved`."""


def format_day(d: date | datetime) -> str:
    """'7 May 2023': day, month name, year; no leading zero (see the module docstring)."""
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


_DIRECTION: dict[str, Literal[-1, 0, 1]] = {
    "last": -1,
    "this past": -1,
    "this": 0,
    "next": 1,
    "this coming": 1,
}


def _resolve(m: re.Match[str], anchor: date) -> DateMention | None:
    g = m.groupdict()
    text = m.group(0)

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
        if g["bare_rel"].lower() == "before last":  # two weeks back: a calendar day only
            return day_mention(_weekday_day(weekday, -1, anchor) - timedelta(days=7))
        return _weekday_mention(m, weekday, -1, anchor)
    direction = _DIRECTION[g["rel"].lower()]
    unit = g["unit"].lower()
    if unit not in ("week", "weekend", "month", "year"):
        return _weekday_mention(m, _weekday_index(unit), direction, anchor)
    if unit == "month":
        return DateMention(
            m.start(), m.end(), text, format_month(_shift_months(anchor, direction)), None, "month"
        )
    if unit == "year":
        return DateMention(m.start(), m.end(), text, str(anchor.year + direction), None, "year")
    relative = Relative(unit, direction, anchor)
    if unit == "week":
        start = _week_start(anchor) + timedelta(days=7 * direction)
        resolved = f"the week of {format_day(start)}"
        return DateMention(m.start(), m.end(), text, resolved, None, "week", relative)
    saturday = _week_start(anchor) + timedelta(days=5 + 7 * direction)
    if direction == -1 and anchor.weekday() >= 5:  # said on a weekend: the one before it
        saturday = _week_start(anchor) - timedelta(days=2)
    resolved = f"the weekend of {format_day(saturday)}"
    return DateMention(m.start(), m.end(), text, resolved, None, "weekend", relative)


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


def _weekday_day(weekday: int, direction: int, anchor: date) -> date:
    """The day "last" (-1), "this" (0) or "next" (1) <weekday> names, said on `anchor`:
    last/next skip the anchor's own weekday; "this" is the one in the anchor's week."""
    if direction < 0:
        return anchor - timedelta(days=(anchor.weekday() - weekday) % 7 or 7)
    if direction > 0:
        return anchor + timedelta(days=(weekday - anchor.weekday()) % 7 or 7)
    return _week_start(anchor) + timedelta(days=weekday)


def _weekday_mention(
    m: re.Match[str], weekday: int, direction: Literal[-1, 0, 1], anchor: date
) -> DateMention:
    d = _weekday_day(weekday, direction, anchor)
    relative = Relative(_WEEKDAYS[weekday].capitalize(), direction, anchor)
    return DateMention(m.start(), m.end(), m.group(0), format_day(d), d, "day", relative)


def find_relative_dates(text: str, anchor: date | datetime) -> list[DateMention]:
    """Every relative date expression in `text`, resolved against `anchor`, in text order."""
    day = anchor.date() if isinstance(anchor, datetime) else anchor
    mentions: list[DateMention] = []
    for m in _PATTERN.finditer(text):
        mention = _resolve(m, day)
        if mention is not None:
            mentions.append(mention)
    return mentions


def rewrite_relative_dates(
    text: str, anchor: date | datetime | None, phrasing: DatePhrasing | None = None
) -> str:
    """`text` with each relative date replaced by its resolution (or by what `phrasing`
    returns for it); unchanged without an anchor.

    Day-precise expressions become "on 7 May 2023" unless a preposition already precedes them;
    periods keep their article ("the week of 1 May 2023")."""
    if anchor is None:
        return text
    out: list[str] = []
    pos = 0
    for mention in find_relative_dates(text, anchor):
        out.append(text[pos : mention.start])
        replacement = phrase_mention(mention, phrasing)
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
        starts_sentence = not before or before[-1] in ".!?"
        if starts_sentence and mention.text[:1].isupper() and replacement[:1].islower():
            replacement = replacement[0].upper() + replacement[1:]
        out.append(replacement)
        pos = mention.end
    out.append(text[pos:])
    return "".join(out)


def phrase_mention(mention: DateMention, phrasing: DatePhrasing | None = None) -> str:
    """The replacement for `mention`: what `phrasing` says, else the general resolution."""
    worded = phrasing(mention) if phrasing is not None else None
    return worded if worded else mention.resolved


_ABSOLUTE_DATE = re.compile(
    r"\b(?:(?:the )?(?:(?:week|weekend|month|" + _WEEKDAY + r")s? (?:before|after|of)"
    r"|(?:(?:a )?\w+ )?(?:days?|weeks?|weekends?|months?|years?) before) )?"
    r"(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December),? \d{4}\b"
    r"|\b(?:19|20)\d{2}\b",
    re.IGNORECASE,
)


def find_date_phrase(text: str) -> str | None:
    """The first absolute (or anchored) date phrase in `text`, e.g. '7 May 2023', 'the week of
    1 May 2023', 'June 2023', '2022', or one a model or a `DatePhrasing` wrote against an
    anchor ('the week before 8 May 2023'); None when the text names no date."""
    m = _ABSOLUTE_DATE.search(text)
    if m is None:
        return None
    return m.group(0)


MONTHS: tuple[str, ...] = ("January", "February", "March", "April", "May", "June", "July", "August")
MONTHS += ("September", "October", "November", "December")
MONTH_PATTERN = "(?:" + "|".join(MONTHS) + ")"  # capitalised only: "may" and "march" are verbs
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
_PART = r"(?:(?:early|mid|late)[ -])"
_DAY_MONTH = rf"(?<![:.\d]){_ORDINAL} (?:of )?{MONTH_PATTERN}|{MONTH_PATTERN} {_ORDINAL}\b(?!:)"
_STATED_DATE = re.compile(
    # a month after a preposition or a part of it ("in March", "early May", "on March 3"):
    # that is what tells the month from the verbs "may" and "march"
    r"\b(?i:in|on|since|until|till|by|during|of|before|after) (?:the )?"
    rf"(?P<month>{_PART}?(?:{_DAY_MONTH}|{MONTH_PATTERN}\b))"
    # a month with its day, either way round: "March 3", "3 March", "12th of June"
    rf"|\b(?P<day>{_DAY_MONTH})"
    rf"|\b(?P<part>(?i:early|mid|late)[ -]{MONTH_PATTERN})\b"
    # a season only as "(in) the summer": "fall" alone is a verb
    r"|\b(?i:in|during|over|of) the (?P<season>spring|summer|autumn|fall|winter)\b",
)


def find_stated_date(text: str) -> str | None:
    """A time the text states without a year ("March", "March 3", "the 12th of June" ->
    "12th of June", "early May", "in the summer" -> "summer"), as written; None when it states
    none. Month names count only capitalised and with a day or a preposition, so the verbs
    "may" and "march" are not months. No year is guessed: which March is meant is ambiguous."""
    m = _STATED_DATE.search(text)
    if m is None:
        return None
    return next(g for g in m.group("day", "month", "part", "season") if g)
