"""Decided plans: where someone is moving (`plan:move`) and their next trip (`plan:trip`).

Each is single-valued: a newer planned move or trip replaces the old one. Only decided plans are
read ("is moving to", "booked flights to", "we're planning a trip to"); wishes and ideas
("would love to", "thinking about") are hedges and block the clause. A plan's own future words
("next month") do not block it, and a trip's own words ("trip", "for the conference") neither.
"""

from __future__ import annotations

import re

from hymem.facts.grammar import ADV, HAS, IS, Hit, Rule, place_rule, rx
from hymem.facts.values import proper_run
from hymem.facts.vocab import OTHERS

_MOVE = r"(?:move|moving|relocate|relocating)\s+(?:back\s+)?to"
_PLAN_MOVE = rx(
    rf"{IS}\s+{ADV}(?:moving|relocating)\s+(?:back\s+)?to",
    rf"(?:will|'ll)\s+{ADV}(?:be\s+)?{_MOVE}",
    rf"{IS}\s+{ADV}(?:going|planning|about)\s+to\s+{_MOVE}",
    rf"plans?\s+to\s+{_MOVE}",
    rf"{HAS}\s+{ADV}decided\s+to\s+{_MOVE}",
)
plan_move = place_rule("plan:move", _PLAN_MOVE)

_OWN = r"(?:a|an|the|our|their|her|his|my)\s+"
_TRIP_NOUN = r"(?:trip|holiday|vacation|getaway|honeymoon|road\s+trip|weekend\s+away)"
_EXTRA = r"(?:[a-z-]+\s+){0,2}?"  # "a road trip", "a family ski trip"
_BOOKED = (
    r"(?:flights?|tickets?|a\s+flight|a\s+ticket|a\s+train|train\s+tickets|"
    rf"{_OWN}{_EXTRA}{_TRIP_NOUN})"
)
# Travel verbs that say a trip on their own ("is flying to Chicago").
_TRIP = rx(
    rf"{IS}\s+{ADV}planning\s+{_OWN}{_EXTRA}{_TRIP_NOUN}\s+to",
    rf"(?:{HAS}\s+{ADV})?(?:booked|planned)\s+{_BOOKED}\s+to",
    rf"{IS}\s+{ADV}(?:taking|going\s+on)\s+{_OWN}{_EXTRA}{_TRIP_NOUN}\s+to",
    rf"{HAS}\s+(?:got\s+)?{ADV}{_OWN}{_EXTRA}{_TRIP_NOUN}\s+(?:coming\s+up\s+|planned\s+|booked\s+)?to",
    rf"{IS}\s+{ADV}(?:flying|travell?ing|jetting\s+off)\s+(?:back\s+)?to",
    rf"(?:will|'ll)\s+{ADV}be\s+(?:flying|travell?ing|heading)\s+to",
)
# "is heading to Cornwall" is a trip only with a time a trip takes ("next month", "in May"):
# "heading to Target tomorrow" is an errand. ("going to" is left out: a concert, a party.)
_GOING = rx(rf"{IS}\s+{ADV}(?:heading|off|driving)\s+(?:back\s+)?(?:up\s+|down\s+)?to")
_WHEN = re.compile(
    r"^\s*(?:(?:with|for)\s+[^,.;!]*?\s+)?(?:next\s+(?:week|weekend|month|year|summer|winter|"
    r"spring|autumn|fall)|this\s+(?:coming\s+)?(?:weekend|summer|winter|spring|autumn|fall)|"
    r"in\s+(?:[A-Z]|a\s+few\s+weeks|two|three|\d)|over\s+the\s+(?:holidays|summer|break))",
)
_FOR_OTHERS = re.compile(
    r"\bfor\s+(?:her|his|their|my|our)\s+(?:[a-z]+\s+)?(?:" + "|".join(sorted(OTHERS)) + r")\b",
    re.IGNORECASE,
)
# After the place: the end of the clause or a word that is no part of a name ("Target run").
_PLACE_END = re.compile(
    r"^(?:\s*$|\s*[.,;:!]|\s+(?:next|this|in|on|for|with|to|soon|tomorrow|later|over|and|at|"
    r"from|again|after|before|via|by|coming)\b)"
)


def _trip_rule(pattern: re.Pattern[str], *, needs_time: bool) -> Rule:
    def rule(rest: str) -> Hit | None:
        m = pattern.match(rest)
        if m is None:
            return None
        run = proper_run(rest[m.end() :])
        if run is None:
            return None
        after = rest[m.end() + run[1] :]
        if _PLACE_END.match(after) is None:
            return None
        if needs_time and _WHEN.match(after) is None:
            return None
        if _FOR_OTHERS.search(after.split(".")[0]):  # "booked flights to Lisbon for her mom"
            return None
        return Hit("plan:trip", run[0], (m.start(), m.end()), m.end() + run[1])

    return rule


plan_trip = _trip_rule(_TRIP, needs_time=False)
plan_going = _trip_rule(_GOING, needs_time=True)
_TRIP_POSS = rx(rf"(?:next|upcoming|big)\s+{_EXTRA}{_TRIP_NOUN}\s+(?:is\s+)?to")
plan_trip_possessive = _trip_rule(_TRIP_POSS, needs_time=False)
