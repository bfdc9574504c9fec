"""Favourites, the relation summaries state in the most shapes.

Besides "Ezra's favourite food is ramen" (a possessive rule), a summary often names the value
first ("Ramen is Ezra's favourite food"), or in the clause before, with a pronoun after it
("Noah loves tacos, they're his favourite food"), or gives the old value and then the new one
("Felix's favourite colour used to be red, now it's green"). Each function here reads one clause
and leaves the owner to the caller, who knows the sentence's subject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hymem.facts.grammar import ADV, Hit
from hymem.facts.text import strip_time, wordset
from hymem.facts.values import phrase

_KIND = r"(?:(?:all-time|absolute|current|new|very)\s+)?"
_THING = r"(?P<thing>[a-z]+(?:[ -][a-z]+){0,2}?)"
_SINCE = r"(?:\s+(?:these days|right now|at the moment|now|of all time|ever|lately))?"
_FAVOURITE = re.compile(
    rf"^\s*{_KIND}favou?rite\s+{_THING}{_SINCE}\s+(?:is|'s|has\s+(?:always\s+)?been)\s+{ADV}",
    re.IGNORECASE,
)
_VALUE_STOPS = wordset(
    "because since but which that who whom whose as so when while although though ever"
)
# A value holding a verb is a clause ("Muse is okay and Radiohead"), not a name.
_VERBS = wordset("is are was were be been has have had 's 're")
_NOT_VALUES = wordset("it this that which what there here he she they who one")


def thing_key(thing: str) -> str:
    """The key of a favourite's kind: lowercase, British spelling, films as movies."""
    words = thing.lower().replace("-", " ").split()
    words = [{"color": "colour", "film": "movie", "flavor": "flavour"}.get(w, w) for w in words]
    return " ".join(words)


def favourite_value(text: str) -> tuple[str, int] | None:
    """A favourite's value at the start of `text`: up to six words, before a clause."""
    return phrase(text, max_words=6, stops=_VALUE_STOPS, and_stops=True)


def whole_value(text: str) -> str | None:
    """`text` as one favourite's value, or None when it is more than a value (a clause, a
    pronoun, a list that runs on)."""
    got = favourite_value(text.strip())
    if got is None or got[1] < len(text.strip().rstrip(".!")):
        return None
    words = got[0].lower().split()
    if words[0] in _NOT_VALUES or any(w in _VERBS for w in words):
        return None
    return got[0]


def possessive_favourite(rest: str) -> Hit | None:
    """ "favourite band is Radiohead" after "Caroline's"."""
    m = _FAVOURITE.match(rest)
    if m is None:
        return None
    got = favourite_value(rest[m.end() :])
    if got is None or got[0].split()[0].lower() in _NOT_VALUES:
        return None
    relation = "favourite:" + thing_key(m.group("thing"))
    return Hit(relation, got[0], (m.start(), m.end()), m.end() + got[1])


_OWNER = (
    r"(?P<owner>[Mm]y|[Hh]er|[Hh]is|[Tt]heir|(?:[Tt]he\s+)?[Uu]ser's"
    r"|[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?'s)"
)
_OWNED = (
    rf"(?:(?:still|now|definitely|really|easily|officially)\s+)*{_OWNER}\s+{_KIND}"
    r"favou?rite\s+(?P<thing>[a-z][a-z -]*?)\s*[.!]?\s*$"
)
_INVERSE = re.compile(rf"^(?P<value>.+?)\s+(?:is|'s)\s+{_OWNED}")
_PRONOUN = re.compile(
    rf"^(?:(?:and|but|so|now)\s+)*(?:it|they|that|this|these)\s*(?:is|'s|are|'re)\s+{_OWNED}",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Owned:
    """A clause naming whose favourite something is: the owner as written ("Ezra's", "his",
    "my"), the kind, the value when the clause names it, and where the clause's words end."""

    owner: str
    thing: str
    value: str | None
    value_end: int


# "favourite city in Europe" is a narrower kind than "favourite city"; "favourite cities" many.
_NARROWER = wordset("in of on at for from to with after among since around")
_SINGULAR_S = wordset("series news glasses jeans shorts trousers pants clothes sports")


def _owned(m: re.Match[str], value: str | None, value_end: int) -> Owned | None:
    thing = strip_time(m.group("thing"))
    words = thing.lower().split()
    if not words or len(words) > 3 or set(words) & (_NARROWER | _VERBS):
        return None
    if words[-1].endswith("s") and not words[-1].endswith("ss") and words[-1] not in _SINGULAR_S:
        return None
    return Owned(m.group("owner"), thing_key(thing), value, value_end)


def inverse_favourite(clause: str) -> Owned | None:
    """ "Radiohead is still Ezra's favourite band": the value before its owner."""
    m = _INVERSE.match(clause)
    if m is None:
        return None
    value = whole_value(m.group("value"))
    return _owned(m, value, m.end("value")) if value is not None else None


def pronoun_favourite(clause: str) -> Owned | None:
    """ "they're Nico's favourite band": the value is the thing the clause before named."""
    m = _PRONOUN.match(clause)
    return _owned(m, None, 0) if m is not None else None


_INTO = (
    r"(?:(?:is|am|are|'s|'m|'re|has\s+been|have\s+been|'s\s+been|'ve\s+been|got|gets)\s+)?"
    rf"{ADV}(?:(?:so|super|completely|absolutely|seriously|obsessively)\s+)*"
    r"(?:into|obsessed\s+with|hooked\s+on|addicted\s+to|crazy\s+about|mad\s+about|"
    r"in\s+love\s+with|an?\s+(?:huge|big|massive)\s+fan\s+of|listening\s+to|watching|reading|"
    r"playing|binging|bingeing|binge-watching|rewatching|eating|cooking|drinking|loving|"
    r"loves|love|adores|adore|likes|discovered|"
    r"(?:keeps|keep|can't\s+stop|cannot\s+stop)\s+(?:listening\s+to|watching|reading|playing|"
    r"eating|drinking|talking\s+about)|can't\s+get\s+enough\s+of|got\s+into|took\s+up|"
    r"picked\s+up)\s+"
)
_ANTECEDENT = re.compile(rf"^\s*{_INTO}(?P<value>.+?)$", re.IGNORECASE)
_HOW_MUCH = re.compile(
    r"(?:\s+(?:nonstop|non-stop|a lot|all the time|constantly|every day|on repeat|so much|"
    r"like crazy|again|lately|these days|recently|right now|at the moment|now))+\s*$",
    re.IGNORECASE,
)


def antecedent(rest: str) -> tuple[str, int] | None:
    """The thing a clause says its subject loves or keeps at ("has been listening to Alvvays
    nonstop"), and where the words that say so end, or None."""
    m = _ANTECEDENT.match(_HOW_MUCH.sub("", rest.rstrip(" .!")))
    if m is None:
        return None
    value = whole_value(m.group("value"))
    return (value, m.start("value")) if value is not None else None


_USED_TO_BE = re.compile(
    rf"^\s*{_KIND}favou?rite\s+{_THING}\s+(?:used\s+to\s+be|was|is\s+no\s+longer|isn't|is\s+not)\s",
    re.IGNORECASE,
)
_NOW_IT_IS = re.compile(
    r"^(?:(?:and|but|so)\s+)?(?:now\s+)?(?:it's|it\s+is)\s+(?:now\s+)?(?P<value>.+?)$",
    re.IGNORECASE,
)


def old_favourite(rest: str) -> str | None:
    """The kind of favourite a clause gives the old value of ("favourite colour used to be
    red" after "Felix's"), or None."""
    m = _USED_TO_BE.match(rest)
    return thing_key(m.group("thing")) if m is not None else None


def new_value(clause: str) -> tuple[str, int, int] | None:
    """ "now it's green": the new value, and where the clause's trigger and value end."""
    m = _NOW_IT_IS.match(clause.rstrip(" .!"))
    if m is None:
        return None
    value = whole_value(strip_time(m.group("value")))
    return (value, m.start("value"), m.end("value")) if value is not None else None
