"""Who a clause is about: the subject at its start, normalised, or one carried from before.

Summaries name their subject first ("Caroline went ...", "User's favourite band ...") or carry
the speaker's prefix before first-person text ("user: We live in Porto", "Melanie: I'm ...").
A prefix before a third-person sentence ("Melanie: Caroline moved ...") is one speaker's report
or echo of another's life, and an assistant's line ("assistant: Congrats on the move to Porto!")
repeats what the user said rather than stating it: neither yields a subject.

A prefix is a speaker only when it is a name ("Melanie", "user"); "Big news:" or "Update:" is an
announcement and is dropped. A later clause may carry the subject: "she"/"he" (or "her"/"his")
when no other person was named since, or no subject at all ("..., and now works at Redline")
within the same sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hymem.facts.clauses import Clause
from hymem.facts.text import MONTHS, NUMBER, WEEKDAYS, wordset
from hymem.facts.vocab import (
    ANNOUNCEMENTS,
    COUNTED_THINGS,
    DISCOURSE,
    NON_HUMAN_SPEAKERS,
    NOT_NAMES,
    OTHERS,
    POSSESSED,
)

Voice = Literal["named", "first", "we"]
How = Literal["own", "pronoun", "elliptical"]


@dataclass(frozen=True)
class Opening:
    """The subject of a clause and the text that follows it."""

    subject: str  # normalised: "user", "caroline", "anna smith"
    voice: Voice  # a name, "I"/"my" after a prefix, or "we"/"our" after a prefix
    possessive: bool  # "Caroline's favourite ...", "my wife ...": `rest` starts at the noun
    rest: str  # the text after the subject, to the end of the body
    offset: int  # where `rest` starts in the body
    end: int  # where the subject's own words end in the body (for carrying it on)
    how: How = "own"  # written in the clause, or carried by a pronoun or by ellipsis


_PREFIX = re.compile(r"^\s*(?P<speaker>[^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*)?)\s*:\s+", re.DOTALL)
_FIRST = re.compile(r"(?:(?P<i>I)(?=['\s])|(?P<we>[Ww]e)(?=['\s])|(?P<my>[Mm]y|[Oo]ur)\s+)")
_NAME = re.compile(
    r"(?P<the>[Tt]he\s+)?(?P<name>[Uu]ser|[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)(?P<poss>'s\b|s'(?=\s))?"
)
_FAMILY = re.compile(r"\s+and\s+(?:her\s+|his\s+|their\s+)?family\b")
_COUNTED = re.compile(rf"\s*{NUMBER}\s+(?P<next>[a-z]+)(?:\s+(?P<then>[a-z]+))?", re.IGNORECASE)
_DISCOURSE = re.compile(rf"(?:(?:{'|'.join(sorted(DISCOURSE))})\b[,!]?\s+)*", re.IGNORECASE)
_PRONOUN = re.compile(r"(?:(?:now|then)\s+)?(?:(?P<she>she|he)\b|(?P<her>her|his)\s+)")
_ADVERBS = wordset("now just finally recently then still currently officially already")
# Base forms after "and": "wants to move to Berlin and work at Globex" is no statement.
_BASE_VERBS = wordset(
    """live move work start get take find join turn celebrate marry date break split relocate
    settle book plan head fly have be go land accept become"""
)


def after_discourse(body: str, pos: int) -> int:
    """Where the words of a clause starting at `pos` begin, after "so", "well", "honestly"."""
    m = _DISCOURSE.match(body, pos)
    return m.end() if m is not None else pos


def split_prefix(text: str) -> tuple[str | None, str]:
    """(the speaker of a "speaker: text" line, lowercase, or None; the text after it). An
    announcement ("Big news:", "Update:") is dropped, not taken for a speaker."""
    text = text.replace("’", "'").strip()
    for _ in range(2):
        prefix = _PREFIX.match(text)
        if prefix is None:
            break
        words = prefix.group("speaker").split()
        lows = [w.lower() for w in words]
        if lows == ["user"] or (len(lows) == 1 and lows[0] in NON_HUMAN_SPEAKERS):
            return lows[0], text[prefix.end() :]
        if all(w[:1].isupper() for w in words) and not set(lows) & ANNOUNCEMENTS:
            return " ".join(lows), text[prefix.end() :]
        text = text[prefix.end() :]
    return None, text


def is_name(words: list[str]) -> bool:
    return all(
        w.lower() not in NOT_NAMES and w.lower() not in MONTHS and w.lower() not in WEEKDAYS
        for w in words
    )


def open_clause(
    body: str, clause: Clause, speaker: str | None, carry: Opening | None, *, elliptical: bool
) -> Opening | None:
    """The subject of `clause`: its own, or `carry` (the last subject named before it) after
    "she"/"her", or with no subject at all where `elliptical` (`carry` is of this sentence)."""
    pos = after_discourse(body, clause.start)
    if speaker is not None:
        return _first_person(body, pos, speaker)
    own = _named(body, pos)
    if own is not None or carry is None:
        return own
    pronoun = _PRONOUN.match(body, pos)
    if pronoun is not None and no_one_else(body, carry.end, pronoun.start(), carry.subject):
        if pronoun.group("she"):
            end = pronoun.end()
            return Opening(carry.subject, "named", False, body[end:], end, end, "pronoun")
        end = pronoun.end()
        head = body[end:].split(maxsplit=1)[0].lower() if body[end:].strip() else ""
        if head in POSSESSED:
            return Opening(carry.subject, "named", True, body[end:], end, end, "pronoun")
        return None
    # not after a colon or a dash: "Anna: married Tom" is a label, not "Anna married Tom"
    if not elliptical or clause.first or clause.mark in (":", "-", "–", "—"):
        return None
    if not _elliptical(body[pos:]):
        return None
    return Opening(carry.subject, "named", False, body[pos:], pos, pos, "elliptical")


def _first_person(body: str, pos: int, speaker: str) -> Opening | None:
    m = _FIRST.match(body, pos)
    if m is None:
        return None
    if m.group("i"):
        return Opening(speaker, "first", False, body[m.end() :], m.end(), m.end())
    if m.group("we"):
        return Opening(speaker, "we", False, body[m.end() :], m.end(), m.end())
    voice: Voice = "first" if m.group("my").lower() == "my" else "we"
    return Opening(speaker, voice, True, body[m.end() :], m.end(), m.end())


def _elliptical(text: str) -> bool:
    """Whether `text` opens with a verb of its own (the subject left out), not a base form."""
    words = [w.lower() for w in re.findall(r"[\w'-]+", text[:80])]
    while words and words[0] in _ADVERBS:
        words = words[1:]
    if not words or not text[:1].islower():
        return False
    return words[0] not in NOT_NAMES and words[0] not in _BASE_VERBS


def _named(body: str, pos: int) -> Opening | None:
    """A clause that opens with a name ("Caroline", "User", "The user", "Anna Smith's")."""
    m = _NAME.match(body, pos)
    if m is None:
        return None
    words = m.group("name").split()
    end = m.end("name")
    poss = m.group("poss")
    if len(words) == 2 and not is_name(words[1:]):
        words, end, poss = words[:1], m.start("name") + len(words[0]), None
    if not is_name(words) or (m.group("the") and [w.lower() for w in words] != ["user"]):
        return None
    if words[0].lower() in ANNOUNCEMENTS or words[0].lower() in DISCOURSE:
        return None
    subject = " ".join(words).lower()
    family = _FAMILY.match(body, end) if poss is None else None
    if family is not None:  # the summariser's "we" with family: "Melanie and family moved"
        return Opening(subject, "we", False, body[family.end() :], family.end(), family.end())
    if poss is None:
        return Opening(subject, "named", False, body[end:], end, end)
    start = end + len(poss)
    after = body[start:]
    head = after.split(maxsplit=1)[0].lower().rstrip(",.;:!?") if after.strip() else ""
    head = head[:-2] if head.endswith("'s") else head
    if poss == "s'" or head in POSSESSED or _counted(after):
        return Opening(subject, "named", True, after, start, start)
    if head in OTHERS:  # "User's sister called": someone else's clause
        return None
    # "Caroline's moving", "User's 34": the contraction of "is" or "has"
    return Opening(subject, "named", False, body[end:], end, end)


def _counted(after: str) -> bool:
    """ "Caroline's two (young) kids ...": a possessive before a count, not "Caroline's 34"."""
    m = _COUNTED.match(after)
    if m is None:
        return False
    return any((m.group(g) or "").lower() in COUNTED_THINGS for g in ("next", "then"))


# Capitalised words after these are places or employers, never the "she" that follows.
_PLACE_BEFORE = re.compile(
    r"(?:\b(?:in|at|from|near|around|outside|across|of|for)|"
    r"\b(?:move|moved|moving|relocated|back|trip|flights?|heading|flying|off|way)\s+to)\s+"
    r"(?:the\s+)?$",
    re.IGNORECASE,
)
_SKIP = NOT_NAMES | MONTHS | WEEKDAYS | DISCOURSE | ANNOUNCEMENTS | {"i"}


def no_one_else(body: str, start: int, end: int, subject: str) -> bool:
    """Whether no person other than `subject` is named in body[start:end], so that a "she" or
    "his" after it can only be the subject. Places and employers ("in Lisbon") do not count."""
    words = {w.lower() for w in re.findall(r"[\w'-]+", body[start:end])}
    if words & OTHERS:  # "User and her mom went shopping, she ..."
        return False
    allowed_until = -1
    for m in re.finditer(r"\b[A-Z][\w'-]*", body[start:end]):
        low = m.group(0).lower().removesuffix("'s")
        before = body[start : start + m.start()]
        if low in _SKIP or low in subject.split():
            continue
        run_on = allowed_until >= 0 and before[allowed_until:].strip() == ""  # "New York"
        if run_on or _PLACE_BEFORE.search(before):
            allowed_until = m.end()
            continue
        return False
    return True


def someone_else(body: str, clause: Clause, subject: str) -> bool:
    """Whether `clause` is about someone other than `subject` ("Anna didn't", "her sister
    might visit"): its doubts or negations are then not about the subject's fact."""
    pos = after_discourse(body, clause.start)
    m = re.match(r"(?:(?:now|then)\s+)?([\w'-]+)(?:\s+([\w'-]+))?", body[pos:])
    if m is None:
        return False
    word, nxt = m.group(1), (m.group(2) or "").lower().removesuffix("'s")
    if word.lower() in ("her", "his", "their", "my", "our", "the") and nxt in OTHERS:
        return True
    low = word.lower().removesuffix("'s")
    return word[:1].isupper() and is_name([low]) and low not in (*subject.split(), "i", "user")
