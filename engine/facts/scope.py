"""Which words in a summary keep a fact read from one of its clauses from being current.

Blocking words (`text.blocking_phrase`) count where they bear on the fact:

- in the fact's own clauses (its trigger words masked: "planning" in "planning a trip to");
- in a clause before it that has no subject of its own ("Also, User works at Initech"), or that
  opens a condition or a hedge ("If she gets the job, User will move to Berlin"); and, for a
  clause with no subject, in the clauses it continues ("wants to quit and works at ..."); but
  not in an earlier clause with a subject of its own: "Lena doesn't live in Munich anymore, she
  moved to Hamburg" states Hamburg;
- in any later clause, however far, unless it is about someone else ("her sister might visit"),
  a relative clause on the value ("Marbleton, which nobody understands") or a reason or time
  for it ("after three interviews"): "User moved to Porto. She might not stay." is no fact.

A question anywhere in the fact's sentence, or after it, blocks it; a fact inside a condition,
a report or a relative clause ("if", "that", "who") is no statement of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hymem.facts.clauses import Clause
from hymem.facts.opening import How, is_name, someone_else
from hymem.facts.text import BLOCK_KINDS, blocking_phrase, wordset

# A clause opened by these is no statement of its fact.
_NOT_STATED = wordset(
    "if unless whether when whenever once until till before than that which who whom whose where as"
)
_CONDITION = wordset("if unless whether")
_RELATIVE = wordset("which who whom whose where that")
_REASON = wordset("after since because")
_HEDGE_OPENER = re.compile(
    r"\s*(?:maybe|perhaps|hopefully|possibly|probably|apparently|supposedly|allegedly|"
    r"reportedly|ideally|hypothetically|in theory|according to|not sure|no idea|rumou?r|"
    r"word is|fingers crossed|if only|in case|even if|assuming|supposing|suppose)\b",
    re.IGNORECASE,
)
_OWN_SUBJECT = re.compile(
    r"\s*(?:(?:so|well|oh|now|then|honestly)\b,?\s+)*(?:i|we|she|he|they|it|you|"
    r"(?:the|her|his|my|our|their|your)\s+\w+|(?P<name>[A-Z][\w'-]*))\b",
    re.IGNORECASE,
)
# A later clause that gives the fact another value now or next, with no verb of its own:
# "..., now it's green", "..., then Lisbon", "and later to Leeds" (not "and now works at").
_CHANGE = re.compile(
    r"\s*(?:(?:and|but)\s+)?(?:now|these days|nowadays|then|later|since then|eventually)\b,?"
    r"\s*(?:(?:it's|it is|they're|they are|to|in|at|with|on)\b|(?-i:[A-Z])|$)",
    re.IGNORECASE,
)
_PERFECT = re.compile(r"\b(?:has|have|'s|'ve)\s+(?:\w+\s+)?(?:been|lived)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Span:
    """Where a fact was read: its first and last clause, the trigger words to mask (body
    offsets), its subject, how the subject was found, and the blocking kinds it allows."""

    first: int
    last: int
    masks: tuple[tuple[int, int], ...]
    subject: str
    how: How
    allow: frozenset[str]
    favourite: bool = False


def allowed(relation: str, trigger: str) -> frozenset[str]:
    """The blocking kinds a fact's own words make harmless: a plan's future, a trip's travel
    words, and a stay's length after "has been" ("has been seeing Anton for a few weeks")."""
    kinds: set[str] = set()
    if relation.startswith("plan:"):
        kinds.add("future")
    if relation in ("plan:trip", "relationship"):  # "is visiting", "for the summer"
        kinds |= {"part", "duration"}
    if _PERFECT.search(trigger):
        kinds.add("duration")
    return frozenset(kinds & BLOCK_KINDS)


def last_clause(clauses: Sequence[Clause], first: int, value_end: int) -> int:
    """The index of the clause the value ends in ("mac and cheese" runs over a cut)."""
    last = first
    while last + 1 < len(clauses) and clauses[last + 1].start < value_end:
        last += 1
    return last


def blocked(body: str, clauses: Sequence[Clause], span: Span) -> bool:
    """Whether anything in `body` keeps the fact at `span` from being a current statement."""
    own = clauses[span.first : span.last + 1]
    if any(c.question for c in own) or any(set(c.joiners) & _NOT_STATED for c in own):
        return True
    head = own[0].head
    text = list(body[head : own[-1].end])
    for start, end in span.masks:
        for i in range(max(start - head, 0), min(end - head, len(text))):
            text[i] = " "
    if blocking_phrase("".join(text), allow=span.allow) is not None:
        return True
    return _before(body, clauses, span) or _after(body, clauses, span)


def _before(body: str, clauses: Sequence[Clause], span: Span) -> bool:
    """Whether a clause before the fact, in its sentence, bears on it (the module docstring)."""
    sentence = clauses[span.first].sentence
    continues = span.how == "elliptical" and bool({"and", "or"} & set(clauses[span.first].joiners))
    for clause in reversed(clauses[: span.first]):
        if clause.sentence != sentence:
            break
        if set(clause.joiners) & (_RELATIVE - {"that"}):
            continue  # "Lou, who used to live in Leeds, moved to York": about Lou's past
        text = body[clause.head : clause.end]
        if set(clause.joiners) & _CONDITION or _HEDGE_OPENER.match(text):
            return True
        if not _has_subject(body, clause) and blocking_phrase(text) is not None:
            return True
        only_hedges = BLOCK_KINDS - {"hedge", "modal"}  # "wants to quit | and works at"
        if continues and blocking_phrase(text, allow=only_hedges) is not None:
            return True
    return False


def _has_subject(body: str, clause: Clause) -> bool:
    """Whether `clause` opens with a subject of its own (a name, a pronoun, "her sister")."""
    m = _OWN_SUBJECT.match(body, clause.start)
    if m is None:
        return False
    name = m.group("name")
    if name is None:
        return True
    return name[:1].isupper() and is_name([name.removesuffix("'s")])


def _after(body: str, clauses: Sequence[Clause], span: Span) -> bool:
    """Whether a clause after the fact, anywhere in the text, bears on it."""
    for index in range(span.last + 1, len(clauses)):
        clause = clauses[index]
        text = body[clause.start : clause.end]
        attached = index == span.last + 1 and clause.sentence == clauses[span.last].sentence
        if attached and set(clause.joiners) & _RELATIVE:
            continue
        # "after three interviews" is a reason; "after Radiohead" ranks a favourite second
        if attached and set(clause.joiners) & _REASON:
            if span.favourite and "after" in clause.joiners:
                return True
            if text.islower():
                continue
        if _CHANGE.match(body, clause.head):
            return True
        if someone_else(body, clause, span.subject):
            continue
        if clause.question:
            return True
        allow = span.allow | {"had"}
        if blocking_phrase(body[clause.head : clause.end], allow=allow) is not None:
            return True
    return False
