"""Where a fact's value ends: a run of capitalised words (a place, an employer, a person) or a
short lowercase phrase (a job title, a favourite).

A value that runs on into the rest of the sentence would differ from the same value written
plainly and cause a false supersession, so both readers stop early and give up on lists.
"""

from __future__ import annotations

import re

from hymem.facts.text import MONTHS, WEEKDAYS, strip_time, wordset
from hymem.facts.vocab import DEMONYMS, NOT_NAMES

_CONNECTORS = wordset("of de da do dos das del della di du la le van von der den y &")
_ABBREVIATIONS = wordset("st. mt. ft. dr. jr. sr. inc. co. corp. ltd. d.c. u.s. u.k.")
_WORD = re.compile(r"\S+")
_MAX_NAME_WORDS = 6  # "University of California Los Angeles"; longer runs are no one name
_CLAUSE_END = ".,;:!?)"


def _is_cap(token: str) -> bool:
    word = token.rstrip(_CLAUSE_END).lower()
    return token[:1].isupper() and word not in MONTHS and word not in WEEKDAYS and word != "i"


def proper_run(text: str, *, person: bool = False) -> tuple[str, int] | None:
    """The capitalised words at the start of `text` (after an optional "the" unless a person
    is wanted) and where they end, or None when there are none, when they are someone's
    ("Caroline's place"), a list ("Porto and Lisbon") or, for a person, a nationality."""
    matches = list(_WORD.finditer(text))
    start = 0
    if matches and matches[0].group(0).lower() == "the" and not person:
        start = 1
    taken: list[re.Match[str]] = []
    i = start
    while i < len(matches):
        tok = matches[i].group(0)
        if _is_cap(tok) and tok.lower().rstrip(_CLAUSE_END) not in NOT_NAMES:
            taken.append(matches[i])
        elif taken and tok.lower() in _CONNECTORS and i + 1 < len(matches):
            if not _is_cap(matches[i + 1].group(0)):
                break
            taken.append(matches[i])
        else:
            break
        if tok[-1] in _CLAUSE_END and tok.lower() not in _ABBREVIATIONS:
            break
        i += 1
    if not taken or len(taken) > _MAX_NAME_WORDS:
        return None
    words = [m.group(0) for m in taken]
    if words[-1].lower() not in _ABBREVIATIONS:
        words[-1] = words[-1].rstrip(_CLAUSE_END)
    if any(w.lower().endswith(("'s", "’s", "s'")) for w in words):
        return None
    if person and any(w.lower() in DEMONYMS for w in words):
        return None
    end = taken[-1].start() + len(words[-1])
    if re.match(r"\s*(?:,\s*[A-Z][^,.;]*(?:,|\s+and\s)|\s+(?:and|or|&)\s+[A-Z]|/)", text[end:]):
        return None
    return " ".join(words), end


def phrase(
    text: str, *, max_words: int, stops: frozenset[str], and_stops: bool = False
) -> tuple[str, int] | None:
    """The words at the start of `text` up to a stop word or clause punctuation, without a
    trailing time phrase, and where they end; None when empty or longer than `max_words`.
    With `and_stops`, "and" ends the phrase only before a pronoun ("pizza and she ...")."""
    matches = list(_WORD.finditer(text))
    taken: list[re.Match[str]] = []
    for i, m in enumerate(matches):
        tok = m.group(0)
        low = tok.lower().rstrip(_CLAUSE_END)
        if low in stops or not low:
            break
        if and_stops and low == "and":
            nxt = matches[i + 1].group(0).lower() if i + 1 < len(matches) else ""
            if not nxt or nxt in NOT_NAMES:
                break
        taken.append(m)
        if tok[-1] in _CLAUSE_END:
            break
    if not taken:
        return None
    raw = " ".join(m.group(0) for m in taken).rstrip(_CLAUSE_END)
    kept = strip_time(raw)
    if not kept or len(kept.split()) > max_words:
        return None
    # the span ends where the kept words end (a stripped time phrase belongs to the rest)
    end = taken[len(kept.split()) - 1].end()
    return kept, end
