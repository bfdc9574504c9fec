"""Word-level normalisation shared by the fact reader and the duplicate test.

Number words become digits (so "two kids" meets "2 kids"), trailing time phrases leave values
("Radiohead these days" is "radiohead"), and one list says which words make a sentence something
other than a current statement of fact: negation, hedging, the past, the future, or a second
value alongside the first ("also works at"). All pure, no models.
"""

from __future__ import annotations

import re


def wordset(text: str) -> frozenset[str]:
    """A vocabulary written as whitespace-separated words (easier to read than a list)."""
    return frozenset(text.split())


def _in_order(text: str) -> list[str]:
    return text.split()


_UNITS = _in_order(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen"""
)
_TENS = {w: 10 * i for i, w in enumerate(_in_order("twenty thirty forty fifty sixty"), start=2)}
_TENS |= {"seventy": 70, "eighty": 80, "ninety": 90}
_UNIT_VALUE = {w: i for i, w in enumerate(_UNITS)}
_COMPOUND = rf"(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_UNITS[1:10])}))?"
# One spoken number up to a hundred: "thirty-four", "twenty one", "a hundred", "twelve".
_UNIT_WORDS = "|".join(sorted(_UNITS, key=len, reverse=True))
NUMBER_WORDS = rf"(?:{_COMPOUND}|(?:a|one) hundred|{_UNIT_WORDS})"
# A number as the summariser or a person writes it: digits (at most three) or words.
NUMBER = rf"(?:\d{{1,3}}|{NUMBER_WORDS})"
_NUMBER_WORD_RE = re.compile(rf"\b{NUMBER_WORDS}\b", re.IGNORECASE)


def parse_number(text: str) -> int | None:
    """The value of one number written in digits or words, or None."""
    t = text.strip().lower().replace("-", " ")
    if t.isdigit():
        return int(t)
    if t in ("a hundred", "one hundred"):
        return 100
    if t in _UNIT_VALUE:
        return _UNIT_VALUE[t]
    parts = t.split()
    if parts and parts[0] in _TENS and len(parts) <= 2:
        tail = _UNIT_VALUE.get(parts[1], -1) if len(parts) == 2 else 0
        return _TENS[parts[0]] + tail if 0 <= tail <= 9 else None
    return None


def digits(text: str) -> str:
    """`text` with its number words written as digits ("two kids" -> "2 kids")."""
    return _NUMBER_WORD_RE.sub(lambda m: str(parse_number(m.group(0))), text)


MONTHS = wordset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec"""
)
WEEKDAYS = wordset("monday tuesday wednesday thursday friday saturday sunday")
_MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?:" + "|".join(WEEKDAYS) + r")"
_PERIOD = (
    r"(?:week|weekend|month|year|night|morning|afternoon|evening|spring|summer|autumn|fall|winter)"
)
_UNIT = r"(?:years?|months?|weeks?|days?)"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# One trailing time phrase; `strip_time` removes them from the end until none is left.
_TIME_TAIL = re.compile(
    r"(?:,?\s+|^)(?:now|nowadays|these days|currently|at the moment|right now|again|still|today|"
    r"tonight|yesterday|recently|lately|by far|hands down|for sure|of all time|ever|nonstop|"
    r"non-stop|on repeat|"
    rf"(?:this|last) (?:{_PERIOD}|{_WEEKDAY})|(?:the )?week of .*|"
    rf"on (?:the )?{_DAY} (?:of )?{_MONTH}(?:,? \d{{4}})?|on {_MONTH} {_DAY}(?:,? \d{{4}})?|"
    rf"on (?:the )?{_DAY}|on {_WEEKDAY}|in (?:early |mid |late |mid-)?{_MONTH}(?:,? \d{{4}})?|"
    rf"in \d{{4}}|since .*|for (?:{NUMBER}|a few|several|many|a couple of) {_UNIT}|"
    rf"(?:{NUMBER}|a|a few|several|many) {_UNIT} ago)[.!]?\s*$",
    re.IGNORECASE,
)


def strip_time(value: str) -> str:
    """`value` without its trailing time phrases ("radiohead these days" -> "radiohead")."""
    previous = None
    value = value.strip()
    while value != previous:
        previous = value
        value = _TIME_TAIL.sub("", value).strip()
    return value


_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def clean_value(raw: str) -> str:
    """The normal form of a fact's value: lowercase, no leading article, no trailing time
    phrase or punctuation, number words as digits, single spaces."""
    value = strip_time(raw.replace("’", "'"))
    value = value.strip(" \t.,;:!\"'()")
    value = _ARTICLE.sub("", value)
    return re.sub(r"\s+", " ", digits(value.lower())).strip()


# --- what makes a clause not a current, single-valued fact ---------------------------------

# Checked case-insensitively.
_NEGATION = (
    r"\bnot\b|n't\b|\bnever\b|\bno\b|\bnone\b|\bnobody\b|\bneither\b|\bnor\b|\bno longer\b|"
    r"\banymore\b|\bany more\b|\binstead\b|\brather than\b"
)
_HEDGE = (
    r"\b(?:if|unless|whether|maybe|perhaps|possibly|probably|hopefully|likely|unlikely|"
    r"thinking|considering|wondering|hoping|hopes?|wish(?:es)?|wants?|wanted|dreams?|dreaming|"
    r"dreamt|dreamed|imagines?|imagining|pretend(?:s|ing)?|someday|plans?|planning|planned|"
    r"gonna|trying|tries|try|applied|applying|interview(?:s|ed|ing)?|offer(?:s|ed)?|"
    r"supposed|supposedly|allegedly|apparently|reportedly|rumou?r(?:ed)?|kidding|joking|"
    r"fictional|role-?play)\b|"
    r"\bone day\b|\bgoing to\b|\babout to\b|\bwould like\b|\bthought about\b|"
    r"\bfingers crossed\b|\bor so\b|"
    r"\b(?:she|he|they|i) (?:thinks?|believes?|guess(?:es)?|reckons?|claims?)\b|"
    r"\b(?:she|he|they|i) says?$"
)
_PAST = (
    r"\bused to\b|\bformerly\b|\bpreviously\b|\bformer\b|\bex\b|\bex-|\buntil\b|\btill\b|"
    r"\bback then\b|\bat the time\b|\bas a (?:kid|child|teen(?:ager)?)\b|\bgrowing up\b|"
    r"\bgrew up\b|'d\b|\bonce\b|\bdied\b|\bpassed away\b|\bput down\b|"
    r"\b(?:her|his|their|my) late\b|\bor (?:was|were|did)\b|\bback in\b|"
    # an end after the fact ("got hired by Globex but turned it down")
    r"\b(?:quit|resigned|declined|turned (?:it|that|them|the \w+) down|(?:got|was) fired|"
    r"(?:got |was )?laid off|moved (?:away|out)|divorced|broke up|split up|separated)\b"
)
_FUTURE = (
    rf"\bnext (?:{_PERIOD}|{_WEEKDAY}|time)\b|\bsoon\b|\btomorrow\b|\bupcoming\b|"
    r"\bstarting (?:next|in|on|from)\b|\bfrom next\b|\bin the future\b|\blater this\b|"
    r"\bwill\b|'ll\b|\bon the way\b"
)
# "had": the past in the fact's own clause ("User had two cars"), not in a later one ("turned
# 45 and had a quiet dinner").
_HAD = r"\bhad\b"
# A second value beside the first ("also works at").
_SECOND = (
    r"\balso\b|\btoo\b|\bas well\b|\banother\b|\bsecond\b|\bboth\b|\beither\b|\bextra\b|"
    r"\bin addition\b|\badditionally\b"
)
# A value that holds only part of the time, or away from home (a trip, a stay).
_PART = (
    r"\bpart-?time\b|\bside (?:job|gig|hustle)\b|\bsometimes\b|"
    r"\boften\b|\busually\b|\boccasionally\b|\bduring\b|\bsummers\b|\bwinters\b|\bweekends\b|"
    r"\bfor the (?:summer|winter|season|holidays?)\b|\btemporar(?:y|ily)\b|\bvisiting\b|"
    r"\bstaying\b|\bpart of the (?:year|week|time)\b|\bhalf (?:of )?the (?:year|time)\b|"
    r"\bfor the (?:week|month|semester|term)\b|\b(?:trip|conference|semester|exchange|"
    r"tour|touring|travel(?:l)?ing)\b|\bfor now\b|\bat least\b|\bfor the (?:time being|moment)\b"
)
# A stay of days to months: temporary after "moved to", but a current state after "has been".
_DURATION = rf"\bfor (?:a|an|one|a few|a couple of|several|{NUMBER}) (?:days?|weeks?|months?)\b"
_BLOCKS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in (
        ("negation", _NEGATION),
        ("hedge", _HEDGE),
        ("past", _PAST),
        ("had", _HAD),
        ("second", _SECOND),
        ("part", _PART),
        ("duration", _DURATION),
        ("future", _FUTURE),
    )
}
# Modal verbs are lowercase only: "May" and "Will" are names and months.
_BLOCKS["modal"] = re.compile(r"\b(?:might|may|could|would|should|must|shall)\b")
BLOCK_KINDS = frozenset(_BLOCKS)
# Idioms whose negation is emphasis ("can't stop listening to", "couldn't be happier").
_IDIOMS = re.compile(
    r"\b(?:can't|cannot|couldn't) (?:stop|get enough)\b|\bcouldn't be happier\b|"
    r"\bnever been happier\b|\bno doubt\b|\bwithout a doubt\b|\bno question\b|"
    r"\bno contest\b|\bno wonder\b",
    re.IGNORECASE,
)


def blocking_phrase(text: str, *, allow: frozenset[str] = frozenset()) -> str | None:
    """The first phrase in `text` that keeps it from stating a current fact (a negation, a
    hedge, the past, the future, a second or part-time value), or None. `allow` names the kinds
    (`BLOCK_KINDS`) that do not block here: "future" for a plan, "duration" after "has been"."""
    text = _IDIOMS.sub(" ", text.replace("’", "'"))
    for kind, pattern in _BLOCKS.items():
        if kind in allow:
            continue
        m = pattern.search(text)
        if m is not None:
            return m.group(0)
    return None


_NEGATED = re.compile(_NEGATION, re.IGNORECASE)


def is_negated(text: str) -> bool:
    """Whether `text` carries a negation: two texts of opposite polarity are never duplicates."""
    return _NEGATED.search(text.replace("’", "'")) is not None


# --- content words, names and numbers (the duplicate test) ---------------------------------

_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_FILLER = wordset(
    """a an the is am are be been being has have do does did to of in on at for with by from
    and or but so as that this these those it its he she they them his her their him i me my
    we us our you your just now still really currently very here there then also already
    quite pretty"""
)


def tokens(text: str) -> list[str]:
    """Words of `text` with number words as digits and a possessive 's dropped."""
    out: list[str] = []
    for tok in _TOKEN.findall(digits(text.replace("’", "'"))):
        out.append(tok[:-2] if tok.lower().endswith("'s") else tok)
    return out


_NO_CONTENT = re.compile(r"\b(?:these days|nowadays|at the moment|right now|lately)\b", re.I)


def content_words(text: str) -> frozenset[str]:
    """The lowercase words of `text` that carry content (negations included)."""
    words = tokens(_NO_CONTENT.sub(" ", text))
    return frozenset(t.lower() for t in words if t.lower() not in _FILLER)


def names_and_numbers(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The capitalised words (names, places, months) and the numbers of `text`: two texts
    that differ in either state different facts however close their vectors are."""
    toks = tokens(text)
    numbers = frozenset(re.findall(r"\d+(?:[.,]\d+)*", digits(text)))  # "5k", "3.5", "1,000"
    names = frozenset(
        t.lower()
        for t in toks
        if t[:1].isupper() and t.lower() not in _FILLER and t.lower() != "user"
    )
    return names, numbers
