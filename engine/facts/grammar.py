"""The pieces every relation pattern is built from: adverbs, forms of "be" and "have", and a
rule's answer (`Hit`).

Every pattern is anchored right after the subject ("Caroline | moved to Porto"), so a relation is
read only where the subject is the one doing it: "Caroline's sister lives in Paris" or "Melanie
said Caroline lives in Paris" read nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hymem.facts.values import proper_run


@dataclass(frozen=True)
class Hit:
    """One relation read from the text after a subject."""

    relation: str
    value: str  # raw; `slots` normalises it
    trigger: tuple[int, int]  # the span of the words that name the relation, in `rest`
    end: int  # where the value ends, in `rest`
    multi: bool = False


Rule = Callable[[str], Hit | None]

# Adverbs that leave a statement current ("finally", "still", "now"): they never block a fact.
ADV = (
    r"(?:(?:just|recently|finally|now|still|currently|officially|already|actually|really|"
    r"happily|newly|proudly|definitely|totally)\s+)*"
)
IS = r"(?:is|am|are|'s|'m|'re)"
HAS = r"(?:has|have|'s|'ve)"
LEAD = rf"^\s*{ADV}"
# What may follow a number: the end, a clause, or a time word ("is 34 now", "turned 30 on ...").
NUM_END = (
    r"(?=\s*$|\s*[.,;!]|\s+(?:now|today|these|nowadays|this|last|on|and|but|since|already|"
    r"yesterday|recently)\b)"
)


def rx(*alternatives: str) -> re.Pattern[str]:
    """One anchored pattern from alternatives, each ending right before its value."""
    return re.compile(LEAD + "(?:" + "|".join(alternatives) + r")\s+", re.IGNORECASE)


def place_rule(relation: str, pattern: re.Pattern[str], *, person: bool = False) -> Rule:
    """A rule whose value is a run of capitalised words after `pattern`."""

    def rule(rest: str) -> Hit | None:
        m = pattern.match(rest)
        if m is None:
            return None
        run = proper_run(rest[m.end() :], person=person)
        if run is None:
            return None
        return Hit(relation, run[0], (m.start(), m.end()), m.end() + run[1])

    return rule
