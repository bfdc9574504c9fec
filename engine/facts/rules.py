"""The relations the fact reader knows, each as English patterns over the text after a subject.

Every pattern is anchored right after the subject ("Caroline | moved to Porto"), so a relation
is read only where the subject is the one doing it: "Caroline's sister lives in Paris" or
"Melanie said Caroline lives in Paris" read nothing. Each rule returns the relation key, the raw
value and where the value ends; `slots` normalises values and checks the sentence as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from hymem.facts.text import NUMBER, parse_number, wordset
from hymem.facts.values import phrase, proper_run
from hymem.facts.vocab import ANIMALS, COUNTED_THINGS, NOT_JOBS, PARTIAL_COUNT, PARTNER_ROLES


@dataclass(frozen=True)
class Hit:
    """One relation read from the text after a subject."""

    relation: str
    value: str  # raw; `slots` normalises it
    trigger: tuple[int, int]  # the span of the words that name the relation, in `rest`
    end: int  # where the value ends, in `rest`
    multi: bool = False


Rule = Callable[[str], Hit | None]

_ADV = (
    r"(?:(?:just|recently|finally|now|still|currently|officially|already|actually|really|"
    r"happily|newly|proudly|definitely)\s+)*"
)
_IS = r"(?:is|am|are|'s|'m|'re)"
_HAS = r"(?:has|have|'s|'ve)"
_LEAD = rf"^\s*{_ADV}"


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(_LEAD + "(?:" + "|".join(alternatives) + r")\s+", re.IGNORECASE)


def _place_rule(relation: str, pattern: re.Pattern[str], *, person: bool = False) -> Rule:
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


# "moved to a new apartment in Porto": the place is after the home
_HOUSING = (
    r"(?:\s+(?:a|an|the|their|her|his|my|our)\s+(?:(?:new|bigger|smaller|nice|little)\s+)*"
    r"(?:apartment|flat|house|place|home|condo)\s+in)?"
)
_LIVES = _rx(
    rf"lives?\s+{_ADV}in",
    rf"{_IS}\s+{_ADV}(?:living|based)\s+(?:in|out\s+of)",
    rf"{_HAS}\s+{_ADV}(?:been\s+living|lived)\s+in",
    rf"(?:{_HAS}\s+{_ADV})?(?:moved|relocated)\s+(?:back\s+)?to{_HOUSING}",
)
_HOME = _rx(r"(?:new\s+)?home\s+(?:is|'s)(?:\s+(?:now|still|currently))*(?:\s+in)?")
_WORKS = _rx(
    rf"works?\s+{_ADV}(?:at|for)",
    rf"{_IS}\s+{_ADV}(?:working\s+(?:at|for)|employed\s+(?:by|at)|an?\s+employee\s+(?:at|of))",
    rf"{_HAS}\s+{_ADV}been\s+(?:working\s+(?:at|for)|employed\s+(?:by|at))",
    rf"(?:got|landed|took|accepted|started|found|{_HAS}(?:\s+got)?)\s+{_ADV}(?:a|an)\s+"
    r"(?:new\s+)?(?:job|position|role)\s+(?:at|with)",
    r"started\s+(?:working|a\s+new\s+job)\s+(?:at|for|with)",
)
_JOINED = re.compile(rf"{_LEAD}(?:{_HAS}\s+{_ADV})?joined\s+", re.IGNORECASE)
_JOB_TITLE = _rx(
    rf"works?\s+{_ADV}as",
    rf"{_IS}\s+{_ADV}working\s+as",
    rf"(?:got|landed|took|accepted|started|found|{_HAS}(?:\s+got)?)\s+{_ADV}(?:a|an)\s+"
    r"(?:new\s+)?(?:job|position|role)\s+as",
    rf"(?:(?:{_HAS}\s+been|{_IS}|was|got)\s+{_ADV})?promoted\s+to",
    r"started\s+(?:working\s+)?as",
)
_TITLE = _rx(r"(?:new\s+)?(?:job\s+title|title|position|role)\s+(?:is|'s)")
_JOB_STOPS = wordset(
    """at for in with on since and but because who which that where when after before of from
    to by now these this last the so as until then again while"""
)


_lives_in = _place_rule("lives_in", _LIVES)
_home = _place_rule("lives_in", _HOME)
_employer = _place_rule("works_at", _WORKS)
_joined = _place_rule("works_at", _JOINED)


def _works_at(rest: str) -> Hit | None:
    hit = _employer(rest)
    if hit is not None:
        return hit
    # "joined X" is someone's company only with "as a <role>" or "team" after it, since
    # "Caroline joined Melanie at the beach" is no employer.
    hit = _joined(rest)
    if hit is not None and re.match(r"\s+(?:as\s+an?\s+[a-z]|team\b)", rest[hit.end :]):
        return hit
    return None


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


# What may follow an age: the end, a clause, or a time word ("is 34 now", "turned 30 on ...").
_NUM_END = (
    r"(?=\s*$|\s*[.,;!]|\s+(?:now|today|these|nowadays|this|last|on|and|but|since|already|"
    r"yesterday|recently)\b)"
)
_YEARS_OLD = r"(?:\s+(?:years?|yrs?)(?:\s+old)?)?"
_AGE = re.compile(
    _LEAD
    + r"(?:"
    + rf"{_IS}\s+{_ADV}(?:aged\s+|age\s+)?(?P<a>{NUMBER}){_YEARS_OLD}{_NUM_END}"
    + rf"|(?:{_HAS}\s+)?{_ADV}turned\s+(?P<b>{NUMBER}){_YEARS_OLD}"
    + rf"(?:{_NUM_END}|(?=\s+in\b))"
    + rf"|{_IS}\s+{_ADV}an?\s+(?P<c>{NUMBER})[- ]years?[- ]old\b"
    + r"|celebrated\s+(?:(?:his|her|their)\s+)?(?P<d>\d{1,3})(?:st|nd|rd|th)\s+birthday"
    + r")",
    re.IGNORECASE,
)
_AGE_POSS = re.compile(rf"^\s*age\s+(?:is|'s)\s+{_ADV}(?P<a>{NUMBER}){_NUM_END}", re.IGNORECASE)


def _age_rule(pattern: re.Pattern[str]) -> Rule:
    def rule(rest: str) -> Hit | None:
        m = pattern.match(rest)
        if m is None:
            return None
        group = next(g for g in "abcd" if g in m.groupdict() and m.group(g))
        n = parse_number(m.group(group))
        if n is None or not 1 <= n <= 120:
            return None
        return Hit("age", str(n), (m.start(), m.start(group)), m.end())

    return rule


_FAVOURITE = re.compile(
    r"^\s*(?:(?:all-time|absolute|current|new|very)\s+)?favou?rite\s+"
    r"(?P<thing>[a-z]+(?:[ -][a-z]+){0,2}?)\s+(?:is|'s)\s+" + _ADV,
    re.IGNORECASE,
)
_VALUE_STOPS = wordset(
    "because since but which that who whom whose as so when while although though ever"
)


def thing_key(thing: str) -> str:
    """The key of a favourite's kind: lowercase, British spelling, films as movies."""
    words = thing.lower().replace("-", " ").split()
    words = [{"color": "colour", "film": "movie", "flavor": "flavour"}.get(w, w) for w in words]
    return " ".join(words)


def favourite_value(text: str) -> tuple[str, int] | None:
    """A favourite's value at the start of `text`: up to six words, before a clause."""
    return phrase(text, max_words=6, stops=_VALUE_STOPS, and_stops=True)


def _favourite(rest: str) -> Hit | None:
    m = _FAVOURITE.match(rest)
    if m is None:
        return None
    got = favourite_value(rest[m.end() :])
    if got is None:
        return None
    relation = "favourite:" + thing_key(m.group("thing"))
    return Hit(relation, got[0], (m.start(), m.end()), m.end() + got[1])


_PARTNER = r"(?P<role>girlfriend|boyfriend|partner|wife|husband|fianc[eé]e?)"
_NAMED = r"(?:named|called)"
_RELATION_VERBS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "married",
        _rx(rf"{_IS}\s+{_ADV}married\s+to", rf"(?:got\s+|{_HAS}\s+{_ADV})?married(?:\s+to)?"),
    ),
    ("engaged", _rx(rf"(?:{_IS}|got|{_HAS}\s+(?:gotten|got))\s+{_ADV}engaged\s+to")),
    (
        "dating",
        _rx(
            rf"(?:{_IS}\s+{_ADV})?dating\s+an?\s+(?:[a-z]+\s+)?(?:guy|girl|man|woman|person)\s+{_NAMED}",
            rf"{_IS}\s+{_ADV}(?:dating|going\s+out\s+with|in\s+a\s+relationship\s+with)",
            rf"{_HAS}\s+been\s+(?:dating|going\s+out\s+with|in\s+a\s+relationship\s+with)",
            r"started\s+(?:dating|going\s+out\s+with)",
        ),
    ),
    ("", _rx(rf"{_HAS}(?:\s+got)?\s+{_ADV}an?\s+(?:new\s+)?{_PARTNER}\s+{_NAMED}")),
)
# "User's wife is Anna", "User's husband John ...", "User's girlfriend's name is Amy"
_PARTNER_POSS = _rx(
    rf"(?:new\s+)?{_PARTNER}(?:'s\s+name\s+is|\s+(?:is|'s)(?:\s+{_NAMED})?|\s+{_NAMED})?"
)
# A breakup with a named person ends that relationship only: "ended:tom" supersedes "dating:tom"
# but not "dating:sam" (see `decide`); an unnamed one leaves the subject single.
_ENDED = _rx(r"(?:broke|split)\s+up\s+with", rf"(?:got|{_IS})\s+{_ADV}divorced\s+from")
_SINGLE = re.compile(
    _LEAD
    + r"(?:(?:broke|split)\s+up\s+with\s+(?:her|his|their|my)\s+"
    + r"(?:boyfriend|girlfriend|partner|wife|husband|fianc[eé]e?)\b"
    + rf"|(?:broke|split)\s+up{_NUM_END}"
    + rf"|{_IS}\s+{_ADV}single(?:\s+again)?{_NUM_END}"
    + rf"|(?:got|{_IS})\s+{_ADV}divorced{_NUM_END})",
    re.IGNORECASE,
)


def _relationship(rest: str) -> Hit | None:
    m = _SINGLE.match(rest)
    if m is not None:
        return Hit("relationship", "single", (m.start(), m.end()), m.end())
    ended = _partner_hit(rest, _ENDED, "ended")
    if ended is not None:
        return ended
    for status, pattern in _RELATION_VERBS:
        hit = _partner_hit(rest, pattern, status)
        if hit is not None:
            return hit
    return None


def _partner_hit(rest: str, pattern: re.Pattern[str], status: str) -> Hit | None:
    m = pattern.match(rest)
    if m is None:
        return None
    run = proper_run(rest[m.end() :], person=True)
    if run is None:
        return None
    role = m.groupdict().get("role")
    if not status and role:
        status = PARTNER_ROLES[role.lower()]
    value = f"{status}:{run[0]}"
    return Hit("relationship", value, (m.start(), m.end()), m.end() + run[1])


def _partner_possessive(rest: str) -> Hit | None:
    m = _PARTNER_POSS.match(rest)
    if m is None:
        return None
    status = PARTNER_ROLES[m.group("role").lower()]
    return _partner_hit(rest, _PARTNER_POSS, status)


_THING = "|".join(sorted(COUNTED_THINGS, key=len, reverse=True))
_COUNT = re.compile(
    rf"{_LEAD}(?:{_HAS}(?:\s+got)?\s+{_ADV})?(?P<n>{NUMBER})\s+(?:(?P<adj>[a-z]+)\s+)??"
    rf"(?P<thing>{_THING})\b",
    re.IGNORECASE,
)
_COUNT_VERB = re.compile(rf"{_LEAD}{_HAS}(?:\s+got)?\s", re.IGNORECASE)
_PARENT_OF = re.compile(
    rf"{_LEAD}{_IS}\s+{_ADV}an?\s+(?:proud\s+|single\s+)?(?:mom|mum|mother|dad|father|parent)\s+"
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
_PET = _rx(
    rf"(?:{_HAS}(?:\s+got)?|got|adopted|rescued|bought)\s+{_ADV}an?\s+(?:[a-z]+\s+){{0,2}}?"
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


_MOVE = r"(?:move|moving|relocate|relocating)\s+(?:back\s+)?to"
_PLAN_MOVE = _rx(
    rf"{_IS}\s+{_ADV}(?:moving|relocating)\s+(?:back\s+)?to",
    rf"(?:will|'ll)\s+{_ADV}(?:be\s+)?{_MOVE}",
    rf"{_IS}\s+{_ADV}(?:going|planning|about)\s+to\s+{_MOVE}",
    rf"plans?\s+to\s+{_MOVE}",
    rf"{_HAS}\s+{_ADV}decided\s+to\s+{_MOVE}",
)

# Rules for the text after a subject ("Caroline | moved to Porto"), first match wins.
VERB_RULES: tuple[tuple[Rule, bool], ...] = (  # (rule, allowed after "we")
    (_lives_in, True),
    (_works_at, False),
    (_job_rule(_JOB_TITLE), False),
    (_age_rule(_AGE), False),
    (_relationship, False),
    (_count_rule(possessive=False), False),
    (_pet_rule(_PET), True),
    (_place_rule("plan:move", _PLAN_MOVE), True),
)
# Rules for the text after a possessive ("Caroline's | favourite band is ...").
POSSESSIVE_RULES: tuple[tuple[Rule, bool], ...] = (
    (_favourite, False),
    (_home, True),
    (_job_rule(_TITLE), False),
    (_age_rule(_AGE_POSS), False),
    (_partner_possessive, False),
    (_count_rule(possessive=True), False),
    (_pet_rule(_PET_POSS), True),
)
