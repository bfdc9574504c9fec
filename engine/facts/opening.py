"""Who a summary is about: the subject at the start of its text, normalised.

Summaries name their subject first ("Caroline went ...", "User's favourite band ...") or carry
the speaker's prefix before first-person text ("user: We live in Porto", "Melanie: I'm ...").
Only those two shapes are read. A prefix before a third-person sentence ("Melanie: Caroline
moved ...") is one speaker's report or echo of another's life, and an assistant's line
("assistant: Congrats on the move to Porto!") repeats what the user said rather than stating it:
neither yields a subject, so neither can supersede anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hymem.facts.text import MONTHS, NUMBER, WEEKDAYS
from hymem.facts.vocab import COUNTED_THINGS, NON_HUMAN_SPEAKERS, NOT_NAMES, POSSESSED

Voice = Literal["named", "first", "we"]


@dataclass(frozen=True)
class Opening:
    """The subject of a summary and the text that follows it."""

    subject: str  # normalised: "user", "caroline", "anna smith"
    voice: Voice  # a name, "I"/"my" after a prefix, or "we"/"our" after a prefix
    possessive: bool  # "Caroline's favourite ...", "my wife ...": `rest` starts at the noun
    rest: str  # the text after the subject
    offset: int  # where `rest` starts in `body`
    body: str  # the text without its speaker prefix


_PREFIX = re.compile(r"^\s*(?P<speaker>[^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*)?)\s*:\s+", re.DOTALL)
_FIRST = re.compile(r"^(?:(?P<i>I)(?=['\s])|(?P<we>[Ww]e)(?=['\s])|(?P<my>[Mm]y|[Oo]ur)\s+)")
_NAME = re.compile(
    r"^(?P<the>[Tt]he\s+)?(?P<name>[Uu]ser|[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)"
    r"(?P<poss>'s\b|s'(?=\s))?"
)
_FAMILY = re.compile(r"\s+and\s+(?:her\s+|his\s+|their\s+)?family\b")
_COUNTED = re.compile(rf"^\s*{NUMBER}\s+(?P<next>[a-z]+)(?:\s+(?P<then>[a-z]+))?", re.IGNORECASE)


def split_prefix(text: str) -> tuple[str | None, str]:
    """(the speaker of a "speaker: text" line, lowercase, or None; the text after it)."""
    text = text.replace("’", "'").strip()
    prefix = _PREFIX.match(text)
    if prefix is None:
        return None, text
    return prefix.group("speaker").strip().lower(), text[prefix.end() :]


def open_statement(text: str) -> Opening | None:
    """The subject of `text` and what follows it, or None when the text has no subject this
    module trusts (see the module docstring)."""
    speaker, body = split_prefix(text)
    if speaker is None:
        return _named(body)
    if speaker in NON_HUMAN_SPEAKERS:
        return None
    m = _FIRST.match(body)
    if m is None:
        return None
    if m.group("i"):
        return Opening(speaker, "first", False, body[1:], 1, body)
    if m.group("we"):
        return Opening(speaker, "we", False, body[2:], 2, body)
    voice: Voice = "first" if m.group("my").lower() == "my" else "we"
    return Opening(speaker, voice, True, body[m.end() :], m.end(), body)


def is_name(words: list[str]) -> bool:
    return all(
        w.lower() not in NOT_NAMES and w.lower() not in MONTHS and w.lower() not in WEEKDAYS
        for w in words
    )


def _named(body: str) -> Opening | None:
    """A summary that opens with a name ("Caroline", "User", "The user", "Anna Smith's")."""
    m = _NAME.match(body)
    if m is None:
        return None
    words = m.group("name").split()
    end = m.end("name")
    poss = m.group("poss")
    if len(words) == 2 and not is_name(words[1:]):
        words, end, poss = words[:1], m.start("name") + len(words[0]), None
    if not is_name(words) or (m.group("the") and [w.lower() for w in words] != ["user"]):
        return None
    subject = " ".join(words).lower()
    family = _FAMILY.match(body, end) if poss is None else None
    if family is not None:  # the summariser's "we" with family: "Melanie and family moved"
        return Opening(subject, "we", False, body[family.end() :], family.end(), body)
    if poss is None:
        return Opening(subject, "named", False, body[end:], end, body)
    start = end + len(poss)
    after = body[start:]
    head = after.split(maxsplit=1)[0].lower() if after.strip() else ""
    head = head[:-2] if head.endswith("'s") else head
    if poss == "s'" or head in POSSESSED or _counted(after):
        return Opening(subject, "named", True, after, start, body)
    # "Caroline's moving", "User's 34": the contraction of "is" or "has"
    return Opening(subject, "named", False, body[end:], end, body)


def _counted(after: str) -> bool:
    """ "Caroline's two (young) kids ...": a possessive before a count, not "Caroline's 34"."""
    m = _COUNTED.match(after)
    if m is None:
        return False
    return any((m.group(g) or "").lower() in COUNTED_THINGS for g in ("next", "then"))
