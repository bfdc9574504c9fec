"""The relations the fact reader knows, each as English patterns over the text after a subject.

Every pattern is anchored right after the subject (see `grammar`). Each rule returns the relation
key, the raw value and where the value ends; `slots` normalises values and checks the clause.
Relationships, plans and favourites have modules of their own; this one holds where someone
lives and works, their job, age, counts and pets, and the two rule lists the reader tries.
"""

from __future__ import annotations

import re

from hymem.facts.favourites import possessive_favourite
from hymem.facts.grammar import ADV, HAS, IS, LEAD, NUM_END, Hit, Rule, place_rule, rx
from hymem.facts.partners import couple, partner_possessive, relationship
from hymem.facts.plans import plan_going, plan_move, plan_trip, plan_trip_possessive
from hymem.facts.text import NUMBER, parse_number, wordset
from hymem.facts.values import phrase, proper_run
from hymem.facts.vocab import (
    ANIMALS,
    COUNTED_THINGS,
    HOBBY_TEAMS,
    NOT_EMPLOYEES,
    NOT_JOBS,
    NOT_PLACES,
    PARTIAL_COUNT,
)

_HOME_NOUN = r"(?:apartment|flat|house|place|home|condo)"
_HOBBY = "|".join(sorted(HOBBY_TEAMS))
# "moved to a new apartment in Porto": the place is after the home
_HOUSING = (
    r"\s+(?:a|an|the|their|her|his|my|our)\s+(?:(?:new|bigger|smaller|nice|little)\s+)*"
    rf"{_HOME_NOUN}\s+in"
)
_LIVES = rx(
    rf"lives?\s+{ADV}(?:over\s+|out\s+|down\s+|up\s+)?in",
    rf"{IS}\s+{ADV}(?:living|based)\s+(?:in|out\s+of)",
    rf"{HAS}\s+{ADV}(?:been\s+living|lived)\s+in",
    rf"(?:{HAS}\s+{ADV})?(?:moved|relocated)\s+(?:back\s+)?to(?:{_HOUSING})?",
    rf"(?:{HAS}\s+{ADV})?moved\s+into{_HOUSING}",
    rf"(?:{HAS}\s+{ADV})?(?:moved|relocated)\s+(?:all\s+the\s+way\s+)?from\s+"
    r"[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}\s+to",
    rf"(?:{HAS}\s+{ADV})?settled\s+(?:down\s+)?in",
)
_HOME = rx(
    r"(?:new\s+)?home\s+(?:is|'s)(?:\s+(?:now|still|currently))*(?:\s+in)?",
    rf"new\s+{_HOME_NOUN}\s+(?:is|'s)\s+{ADV}in",
)
_WORKS = rx(
    rf"works?\s+{ADV}(?:at|for)",
    rf"works?\s+{ADV}in\s+(?!(?:the|a|an|her|his|my|our|their|mornings?|evenings?|afternoons?|"
    r"nights?|person|shifts?)\b)[a-z]+(?:\s+[a-z]+)?\s+(?:at|for)",
    rf"{IS}\s+{ADV}(?:working\s+(?:at|for)|employed\s+(?:by|at)|an?\s+employee\s+(?:at|of))",
    rf"{HAS}\s+{ADV}been\s+(?:working\s+(?:at|for)|employed\s+(?:by|at))",
    rf"(?:got|landed|took|accepted|started|found|{HAS}(?:\s+got)?)\s+{ADV}(?:a|an)\s+"
    r"(?:new\s+|full-time\s+|permanent\s+)?(?:job|position|role)\s+(?:at|with)",
    r"(?:started|began)\s+(?:work|working|a\s+new\s+job)\s+(?:at|for|with)",
    rf"(?:(?:got|was|{HAS}\s+been|{IS}\s+{ADV}been)\s+{ADV})?hired\s+(?:by|at|on\s+at)",
    rf"(?:{IS}\s+{ADV}(?:on|part\s+of)|joined)\s+(?:the|a)\s+(?!(?:{_HOBBY})\b)"
    r"(?:[a-z-]+\s+){0,2}?team\s+at",
    r"accepted\s+(?:an?|the|their)\s+(?:job\s+)?offer\s+(?:from|at|with)",
)
_JOINED = re.compile(rf"{LEAD}(?:{HAS}\s+{ADV})?joined\s+", re.IGNORECASE)
# "is a nurse at Westfield Hospital": a role whose last word reads as a job.
_ROLE_AT = re.compile(
    rf"{LEAD}{IS}\s+{ADV}(?:an?|the)\s+(?:new\s+)?(?P<role>[a-z-]+(?:\s+[a-z-]+){{0,2}}?)\s+at\s+",
    re.IGNORECASE,
)
_RANKS = wordset("best worst top biggest newest oldest only first last youngest fastest")
_JOB_WORD = re.compile(
    r"(?:er|or|ist|ian|ant|ent|eer|ive|ic|nurse|chef|cook|clerk|lead|head|tech|coach|intern|"
    r"barista|associate|vet|dev|analyst|officer|engineer|ceo|cto|cfo)$"
)
_JOB_TITLE = rx(
    rf"works?\s+{ADV}as",
    rf"{IS}\s+{ADV}working\s+as",
    rf"(?:got|landed|took|accepted|started|found|{HAS}(?:\s+got)?)\s+{ADV}(?:a|an)\s+"
    r"(?:new\s+)?(?:job|position|role)\s+as",
    rf"(?:(?:{HAS}\s+been|{IS}|was|got)\s+{ADV})?promoted\s+to",
    r"started\s+(?:working\s+)?as",
)
_TITLE = rx(r"(?:new\s+)?(?:job\s+title|title|position|role)\s+(?:is|'s)")
_JOB_STOPS = wordset(
    """at for in with on since and but because who which that where when after before of from
    to by now these this last the so as until then again while"""
)

_moved = place_rule("lives_in", _LIVES)
_home = place_rule("lives_in", _HOME)


def _lives_in(rest: str) -> Hit | None:
    hit = _moved(rest)
    return None if hit is None or hit.value.lower() in NOT_PLACES else hit


_employer = place_rule("works_at", _WORKS)
_joined = place_rule("works_at", _JOINED)


def _works_at(rest: str) -> Hit | None:
    hit = _employer(rest)
    if hit is not None:
        return hit
    # "joined X" is someone's company only with "as a <role>" or "team" after it, since
    # "Caroline joined Melanie at the beach" is no employer.
    hit = _joined(rest)
    if hit is not None and re.match(r"\s+(?:as\s+an?\s+[a-z]|team\b)", rest[hit.end :]):
        return hit
    m = _ROLE_AT.match(rest)
    if m is None:
        return None
    role = m.group("role").lower()
    if set(role.split()) & (NOT_EMPLOYEES | _RANKS) or not _JOB_WORD.search(role):
        return None
    run = proper_run(rest[m.end() :])
    if run is None:
        return None
    return Hit("works_at", run[0], (m.start(), m.end()), m.end() + run[1])


def _job_rule(pattern: re.Pattern[str]) -> Rule:
    def rule(rest: str) -> Hit | None:
        m = pattern.match(rest)
        if m is None:
            return None
        after = rest[m.end() :]
        article = re.match(r"(?:(?:now|still|currently)\s+)*(?:(?:a|an|the)\s+)?", after, re.I)
        skip = article.end() if article else 0
        got = phrase(after[skip:], max_words=4, stops=_JOB_STOPS)
        if got is None or not re.fullmatch(r"[A-Za-z][A-Za-z &/-]*", got[0]):
            return None
        if got[0].lower() in NOT_JOBS:
            return None
        # two jobs at once ("a nurse and a writer", "a nurse, a writer"): which one changes?
        if re.match(r"\s*(?:,|and\b|&|/)\s*(?:an?\s+)", after[skip + got[1] :]):
            return None
        return Hit("job_title", got[0], (m.start(), m.end()), m.end() + skip + got[1])

    return rule


_YEARS_OLD = r"(?:\s+(?:years?|yrs?)(?:\s+old)?)?"
_AGE = re.compile(
    LEAD
    + r"(?:"
    + rf"{IS}\s+{ADV}(?:aged\s+|age\s+)?(?P<a>{NUMBER}){_YEARS_OLD}{NUM_END}"
    + rf"|(?:{HAS}\s+)?{ADV}(?:turned|hit)\s+(?P<b>{NUMBER}){_YEARS_OLD}"
    + rf"(?:{NUM_END}|(?=\s+in\b))"
    + rf"|{IS}\s+{ADV}an?\s+(?P<c>{NUMBER})[- ]years?[- ]old\b"
    + r"|(?:celebrated|had)\s+(?:(?:his|her|their)\s+)?(?P<d>\d{1,3})(?:st|nd|rd|th)\s+birthday"
    + rf"|turns\s+(?P<e>{NUMBER}){_YEARS_OLD}(?=\s+today\b)"
    + r")",
    re.IGNORECASE,
)
_AGE_POSS = re.compile(rf"^\s*age\s+(?:is|'s)\s+{ADV}(?P<a>{NUMBER}){NUM_END}", re.IGNORECASE)


def _age_rule(pattern: re.Pattern[str]) -> Rule:
    def rule(rest: str) -> Hit | None:
        m = pattern.match(rest)
        if m is None:
            return None
        group = next(g for g in "abcde" if g in m.groupdict() and m.group(g))
        n = parse_number(m.group(group))
        if n is None or not 1 <= n <= 120:
            return None
        return Hit("age", str(n), (m.start(), m.start(group)), m.end())

    return rule


_THING = "|".join(sorted(COUNTED_THINGS, key=len, reverse=True))
_COUNT = re.compile(
    rf"{LEAD}(?:{HAS}(?:\s+got)?\s+{ADV})?(?P<n>{NUMBER})\s+(?:(?P<adj>[a-z]+)\s+)??"
    rf"(?P<thing>{_THING})\b",
    re.IGNORECASE,
)
_COUNT_VERB = re.compile(rf"{LEAD}{HAS}(?:\s+got)?\s", re.IGNORECASE)
_PARENT_OF = re.compile(
    rf"{LEAD}{IS}\s+{ADV}an?\s+(?:proud\s+|single\s+)?(?:mom|mum|mother|dad|father|parent)\s+"
    rf"(?:of|to)\s+(?P<n>{NUMBER})(?=\s*$|\s*[.,;!]|\s+(?:kids|children|boys|girls)\b)",
    re.IGNORECASE,
)


def _count_rule(*, possessive: bool) -> Rule:
    def rule(rest: str) -> Hit | None:
        parent = _PARENT_OF.match(rest) if not possessive else None
        if parent is not None:
            n = parse_number(parent.group("n"))
            return Hit("count:kids", str(n), (parent.start(), parent.start("n")), parent.end())
        if not possessive and _COUNT_VERB.match(rest) is None:
            return None
        m = _COUNT.match(rest)
        if m is None:
            return None
        if (m.group("adj") or "").lower() in PARTIAL_COUNT or parse_number(m.group("n")) is None:
            return None
        key = COUNTED_THINGS[m.group("thing").lower()]
        n = parse_number(m.group("n"))
        return Hit(f"count:{key}", str(n), (m.start(), m.start("n")), m.end())

    return rule


_ANIMAL = r"(?P<animal>" + "|".join(sorted(ANIMALS, key=len, reverse=True)) + r")"
_NAMED = r"(?:named|called)"
_PET = rx(
    rf"(?:{HAS}(?:\s+got)?|got|adopted|rescued|bought)\s+{ADV}an?\s+(?:[a-z]+\s+){{0,2}}?"
    rf"{_ANIMAL}\s+{_NAMED}"
)
_PET_POSS = re.compile(
    rf"^\s*(?:(?:new|little|young|old|baby|rescue)\s+)?{_ANIMAL}"
    rf"(?:'s\s+name\s+is|\s+is(?:\s+{_NAMED})?|\s+{_NAMED})?\s+",
    re.IGNORECASE,
)


def _pet_rule(pattern: re.Pattern[str]) -> Rule:
    def rule(rest: str) -> Hit | None:
        m = pattern.match(rest)
        if m is None:
            return None
        run = proper_run(rest[m.end() :], person=True)
        if run is None or len(run[0].split()) > 2:
            return None
        relation = "pet:" + ANIMALS[m.group("animal").lower()]
        return Hit(relation, run[0], (m.start(), m.end()), m.end() + run[1], multi=True)

    return rule


# Rules for the text after a subject ("Caroline | moved to Porto"), first match wins.
VERB_RULES: tuple[tuple[Rule, bool], ...] = (  # (rule, allowed after "we")
    (_lives_in, True),
    (_works_at, False),
    (_job_rule(_JOB_TITLE), False),
    (_age_rule(_AGE), False),
    (relationship, False),
    (couple, False),
    (_count_rule(possessive=False), False),
    (_pet_rule(_PET), True),
    (plan_move, True),
    (plan_trip, True),
    (plan_going, True),
)
# Rules for the text after a possessive ("Caroline's | favourite band is ...").
POSSESSIVE_RULES: tuple[tuple[Rule, bool], ...] = (
    (possessive_favourite, False),
    (_home, True),
    (_job_rule(_TITLE), False),
    (_age_rule(_AGE_POSS), False),
    (partner_possessive, False),
    (_count_rule(possessive=True), False),
    (_pet_rule(_PET_POSS), True),
    (plan_trip_possessive, True),
)
