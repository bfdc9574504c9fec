"""One key fact read from a summary's text: (subject, relation, value).

Precision comes first. A fact read wrongly makes its summary supersede a true one (hiding it);
a fact not read leaves both summaries for sleep to reconcile. The text is read clause by clause
(`clauses`): a clause yields a fact when it has a subject (`opening`: its own, or one carried by
"she" or by ellipsis) and one relation pattern reads right after it (`rules`), or when it names
a favourite in one of the shapes `favourites` knows. The first such fact that nothing around it
turns into something other than a current statement (`scope`: a question, a negation, a hedge,
the past, the future except for plans, a second value) is the text's fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hymem.facts.clauses import Clause, clause_text, split_clauses
from hymem.facts.favourites import (
    Owned,
    antecedent,
    inverse_favourite,
    new_value,
    old_favourite,
    pronoun_favourite,
)
from hymem.facts.opening import How, Opening, is_name, no_one_else, open_clause, split_prefix
from hymem.facts.partners import couple
from hymem.facts.rules import POSSESSIVE_RULES, VERB_RULES
from hymem.facts.scope import Span, allowed, blocked, last_clause
from hymem.facts.text import clean_value, content_words
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
    """A fact and the content words its text adds beyond it ("the apartment is lovely"), so a
    caller merging two texts of one fact can keep the one that says more."""

    fact: Fact
    detail: frozenset[str]


def extract_fact(text: str) -> Fact | None:
    """The fact `text` states, or None when it states none this reader is sure of."""
    reading = read_fact(text)
    return reading.fact if reading is not None else None


# A summary states one fact in a sentence or two; a longer text is no single-fact summary, and
# reading one costs time in its length squared (each clause is checked against those after it).
MAX_CHARS = 1000


@dataclass(frozen=True)
class _Found:
    fact: Fact
    span: Span
    start: int  # where the fact's words start in the body
    value_end: int


@lru_cache(maxsize=8192)
def read_fact(text: str) -> Reading | None:
    """The fact `text` states and what else it says, or None (see the module docstring).
    Cached by text (the result is immutable): write-time consolidation reads each neighbour's
    fact once per new summary it is compared with, and the same text's fact once for its key."""
    speaker, body = split_prefix(text)
    if speaker in NON_HUMAN_SPEAKERS or len(body) > MAX_CHARS:
        return None
    clauses = split_clauses(body)
    openings: list[Opening | None] = []
    carry: Opening | None = None  # the last subject named, for "she" or ellipsis to carry on
    carry_sentence = -1
    best: _Found | None = None
    for index, clause in enumerate(clauses):
        same = carry_sentence == clause.sentence
        opening = open_clause(body, clause, speaker, carry, elliptical=same)
        openings.append(opening)
        found = _read_clause(body, clauses, openings, index, speaker, carry)
        if opening is not None and opening.how == "own" and not opening.possessive:
            carry, carry_sentence = opening, clause.sentence
        if found is None or blocked(body, clauses, found.span):
            continue
        if best is None or best.fact.slot == found.fact.slot:
            best = found  # a later value of the same fact is the newer one ("..., then Lisbon")
    if best is None:
        return None
    outside = body[: best.start] + " " + body[best.value_end :]
    return Reading(best.fact, content_words(outside) - set(best.fact.subject.split()))


def _read_clause(
    body: str,
    clauses: list[Clause],
    openings: list[Opening | None],
    index: int,
    speaker: str | None,
    carry: Opening | None,
) -> _Found | None:
    clause, opening = clauses[index], openings[index]
    if opening is not None:
        found = _by_rules(body, clauses, index, opening)
        if found is not None:
            return found
    if speaker is not None and opening is None:
        found = _couple_with_speaker(body, clauses, index, speaker)
        if found is not None:
            return found
    if not {"and", "or"} & set(clause.joiners):  # "mac | and cheese is ..." is no value
        last = _joined_by_and(body, clauses, index)
        owned = inverse_favourite(body[clause.start : clauses[last].end])
        if owned is not None and owned.value is not None:
            subject = _owner(owned, body, speaker, carry, clause.start)
            if subject is not None:
                masks = ((clause.start + owned.value_end, clauses[last].end),)
                return _found(clauses, index, last, subject, owned, owned.value, masks, "own")
    previous = openings[index - 1] if index > 0 else None
    if previous is None or clauses[index - 1].sentence != clause.sentence:
        return None
    return _from_previous(body, clauses, index, previous, speaker)


def _joined_by_and(body: str, clauses: list[Clause], index: int) -> int:
    """The last clause joined to clause `index` by a bare "and"/"or" ("Mac | and cheese is
    ..."): a value named first may run over such a cut."""
    last = index
    while last + 1 < len(clauses):
        nxt = clauses[last + 1]
        bare = body[clauses[last].end : nxt.head].strip() == ""
        if nxt.sentence != clauses[index].sentence or nxt.joiners not in (("and",), ("or",)):
            break
        if not bare:
            break
        last += 1
    return last


def _by_rules(body: str, clauses: list[Clause], index: int, opening: Opening) -> _Found | None:
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
        trigger = (off + hit.trigger[0], off + hit.trigger[1])
        allow = allowed(hit.relation, body[trigger[0] : trigger[1]])
        last = last_clause(clauses, index, off + hit.end)
        favourite = hit.relation.startswith("favourite:")
        span = Span(index, last, (trigger,), opening.subject, opening.how, allow, favourite)
        return _Found(fact, span, clauses[index].start, off + hit.end)
    return None


_AND_I = re.compile(r"(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)(?=\s+and\s+I\b)")


def _couple_with_speaker(
    body: str, clauses: list[Clause], index: int, speaker: str
) -> _Found | None:
    """ "Hana: Diego and I got married": the speaker's partner named before "and I"."""
    clause = clauses[index]
    m = _AND_I.match(body, clause.start)
    if m is None or not is_name(m.group("name").split()):
        return None
    hit = couple(body[m.end() :], partner=m.group("name"))
    if hit is None:
        return None
    fact = Fact(speaker, hit.relation, clean_value(hit.value))
    trigger = (m.end() + hit.trigger[0], m.end() + hit.trigger[1])
    last = last_clause(clauses, index, m.end() + hit.end)
    span = Span(index, last, (trigger,), speaker, "own", frozenset())
    return _Found(fact, span, clause.start, m.end() + hit.end)


def _owner(
    owned: Owned, body: str, speaker: str | None, carry: Opening | None, until: int
) -> str | None:
    """Whose favourite a clause names: "my" is the speaker's, "his" that of `carry` (the
    subject before it, when no one else is named up to `until`), "Ezra's" Ezra's unless a
    speaker reports it."""
    low = owned.owner.lower()
    if low in ("my", "our"):
        return speaker
    if speaker is not None:
        return None  # a third-person owner after a prefix: a report, not the owner's word
    if low in ("her", "his", "their"):
        if carry is None or not no_one_else(body, carry.end, until, carry.subject):
            return None
        return carry.subject
    words = re.sub(r"^[Tt]he\s+", "", owned.owner)[:-2].split()
    return " ".join(words).lower() if is_name(words) else None


def _from_previous(
    body: str, clauses: list[Clause], index: int, previous: Opening, speaker: str | None
) -> _Found | None:
    """A favourite whose value or kind the clause before gives: "Noah loves tacos, | they're
    his favourite food"; "Felix's favourite colour used to be red, | now it's green"."""
    clause, before = clauses[index], clauses[index - 1]
    text = clause_text(body, clause)
    rest = body[previous.offset : before.end]
    owned = pronoun_favourite(text)
    if owned is not None and not previous.possessive:
        thing = antecedent(rest)
        if thing is None:
            return None
        value, value_at = thing[0], previous.offset + thing[1]
        if _owner(owned, body, speaker, previous, value_at) != previous.subject:
            return None
        masks: tuple[tuple[int, int], ...] = (
            (previous.offset, value_at),
            (clause.start, clause.end),
        )
        how: How = "own" if previous.how == "own" else "pronoun"
        return _found(clauses, index - 1, index, previous.subject, owned, value, masks, how)
    kind = old_favourite(rest) if previous.possessive else None
    now = new_value(text) if kind is not None else None
    if kind is None or now is None:
        return None
    owned = Owned(previous.subject, kind, now[0], now[2])
    masks = ((clause.start, clause.start + now[1]),)
    return _found(clauses, index, index, previous.subject, owned, now[0], masks, "own")


def _found(
    clauses: list[Clause],
    first: int,
    index: int,
    subject: str,
    owned: Owned,
    value: str,
    masks: tuple[tuple[int, int], ...],
    how: How,
) -> _Found | None:
    cleaned = clean_value(value)
    if not cleaned:
        return None
    fact = Fact(subject, "favourite:" + owned.thing, cleaned)
    span = Span(first, index, masks, subject, how, frozenset(), favourite=True)
    return _Found(fact, span, clauses[first].start, clauses[index].end)


def fact_key(text: str) -> str | None:
    """ "subject|relation" of the single-valued fact `text` states, else None: what a summary
    stores as `fact_key`, so write-time supersession and the standing profile find the
    summaries of one fact by key instead of by wording."""
    fact = extract_fact(text)
    return None if fact is None or fact.multi else f"{fact.subject}|{fact.relation}"
