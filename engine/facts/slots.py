"""One key fact read from a summary's text: (subject, relation, value).

Precision comes first. A fact read wrongly makes its summary supersede a true one (hiding it);
a fact not read leaves both summaries for sleep to reconcile. So a text yields a fact only when
it opens with a trusted subject (`opening`), one relation pattern reads right after it
(`rules`), and nothing in the sentence turns it into something other than a current statement:
a question, a negation, a hedge ("might", "thinking about"), the past ("used to"), the future
(except for plans), or a second value ("also works at"). See `text.blocking_phrase`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hymem.facts.opening import Opening, is_name, open_statement, split_prefix
from hymem.facts.rules import POSSESSIVE_RULES, VERB_RULES, favourite_value, thing_key
from hymem.facts.text import blocking_phrase, clean_value, content_words, strip_time, wordset
from hymem.facts.vocab import NON_HUMAN_SPEAKERS


@dataclass(frozen=True)
class Fact:
    """A single fact: `subject` and `relation` say which fact, `value` what it is now.

    `multi` marks relations that hold several values at once (pets): a new value adds to the
    old ones instead of replacing them."""

    subject: str
    relation: str
    value: str
    multi: bool = False

    @property
    def slot(self) -> tuple[str, str]:
        """Which fact this is, whatever its value."""
        return self.subject, self.relation


@dataclass(frozen=True)
class Reading:
    """A fact and the content words its text adds beyond it ("the apartment is lovely"): two
    texts with the same fact are one memory only when the newer adds nothing."""

    fact: Fact
    detail: frozenset[str]


def extract_fact(text: str) -> Fact | None:
    """The fact `text` states, or None when it states none this reader is sure of."""
    reading = read_fact(text)
    return reading.fact if reading is not None else None


def read_fact(text: str) -> Reading | None:
    """The fact `text` states and what else it says, or None (see the module docstring)."""
    text = text.replace("’", "'").strip()
    if "?" in text:
        return None
    opening = open_statement(text)
    found = _from_opening(opening) if opening is not None else None
    if found is None:
        found = _inverse_favourite(text)
    if found is None:
        return None
    fact, body, (start, end), value_end = found
    masked = body[:start] + " " + body[end:]
    if blocking_phrase(masked, future_ok=fact.relation.startswith("plan:")) is not None:
        return None
    return Reading(fact, content_words(body[value_end:]))


_Found = tuple[Fact, str, tuple[int, int], int]  # fact, body, trigger span, value end


def _from_opening(opening: Opening) -> _Found | None:
    rules = POSSESSIVE_RULES if opening.possessive else VERB_RULES
    for rule, after_we in rules:
        if opening.voice == "we" and not after_we:
            continue
        hit = rule(opening.rest)
        if hit is None:
            continue
        value = clean_value(hit.value)
        if not value or value == opening.subject:
            return None
        fact = Fact(opening.subject, hit.relation, value, hit.multi)
        off = opening.offset
        return fact, opening.body, (off + hit.trigger[0], off + hit.trigger[1]), off + hit.end
    return None


_INVERSE = re.compile(
    r"^(?P<value>.+?)\s+(?:is|'s)\s+(?:(?:still|now|definitely|really)\s+)*"
    r"(?P<owner>[Mm]y|(?:[Tt]he\s+)?[Uu]ser's|[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?'s)\s+"
    r"(?:(?:all-time|absolute|current|new)\s+)?favou?rite\s+(?P<thing>[a-z][a-z -]*?)\s*[.!]?\s*$"
)
_NOT_VALUES = wordset("it this that which what there here he she they who one")


def _inverse_favourite(text: str) -> _Found | None:
    """ "Radiohead is still User's favourite band": the favourite named before its owner."""
    speaker, body = split_prefix(text)
    m = _INVERSE.match(body)
    if m is None or (speaker is not None and speaker in NON_HUMAN_SPEAKERS):
        return None
    owner = m.group("owner")
    if owner.lower() == "my":
        subject = speaker
    elif speaker is None:
        words = re.sub(r"^[Tt]he\s+", "", owner)[:-2].split()
        subject = " ".join(words).lower() if is_name(words) else None
    else:
        subject = None  # a third-person owner after a prefix: a report, not the owner's word
    thing = strip_time(m.group("thing"))
    got = favourite_value(m.group("value") + ".")
    if subject is None or not thing or len(thing.split()) > 3 or got is None:
        return None
    value = clean_value(got[0])
    if value.split()[0] in _NOT_VALUES or got[1] < len(m.group("value")):
        return None
    fact = Fact(subject, "favourite:" + thing_key(thing), value)
    return fact, body, (m.end("value"), m.end()), m.end()


def fact_key(text: str) -> str | None:
    """ "subject|relation" of the single-valued fact `text` states, else None: what a summary
    stores as `fact_key`, so write-time supersession and the standing profile find the
    summaries of one fact by key instead of by wording."""
    fact = extract_fact(text)
    return None if fact is None or fact.multi else f"{fact.subject}|{fact.relation}"
