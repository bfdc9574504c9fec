"""Who someone is with: the `relationship` relation, valued "dating:mira", "married:anna",
"engaged:sam", "partner:sam", "ended:tom" (a breakup with that person) or "single".

A breakup with a named person ends that relationship only: "ended:tom" supersedes "dating:tom"
but not "dating:sam" (see `decide`); an unnamed one leaves the subject single.
"""

from __future__ import annotations

import re

from hymem.facts.grammar import ADV, HAS, IS, LEAD, Hit, rx
from hymem.facts.text import wordset
from hymem.facts.values import proper_run
from hymem.facts.vocab import PARTNER_ROLES

_PARTNER = r"(?P<role>girlfriend|boyfriend|partner|wife|husband|fianc[eé]e?)"
_NAMED = r"(?:named|called)"
_SWEETHEART = (
    r"(?:(?:long-?time|high\s+school|college|childhood|university)\s+)?"
    r"(?:sweetheart|girlfriend|boyfriend|partner|fianc[eé]e?)"
)
_RELATION_VERBS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "married",
        rx(
            rf"{IS}\s+{ADV}married\s+to",
            rf"(?:got\s+|{HAS}\s+{ADV})?married\s+(?:his|her|their)\s+{_SWEETHEART}\s*,?",
            rf"(?:got\s+|{HAS}\s+{ADV})?married(?:\s+to)?",
            r"tied\s+the\s+knot\s+with",
        ),
    ),
    ("engaged", rx(rf"(?:{IS}|got|{HAS}\s+(?:gotten|got))\s+{ADV}engaged\s+to")),
    (
        "dating",
        rx(
            rf"(?:{IS}\s+{ADV})?dating\s+an?\s+(?:[a-z]+\s+)?(?:guy|girl|man|woman|person)\s+{_NAMED}",
            rf"{IS}\s+{ADV}(?:dating|going\s+out\s+with|in\s+a\s+relationship\s+with|"
            r"(?:back\s+)?together\s+with|back\s+with)",
            rf"{HAS}\s+{ADV}been\s+(?:dating|seeing|going\s+out\s+with|"
            r"in\s+a\s+relationship\s+with|together\s+with)",
            r"started\s+(?:dating|seeing|going\s+out\s+with)",
            r"got\s+back\s+together\s+with",
        ),
    ),
    ("", rx(rf"{HAS}(?:\s+got)?\s+{ADV}an?\s+(?:new\s+)?{_PARTNER}(?:\s+{_NAMED}|\s*,)")),
)
# "Isaac is with Priya now" / "is back with Tom": only beside words of a relationship, since
# "is with Globex now" is an employer and "is with Priya" alone is company.
_WITH = re.compile(rf"{LEAD}{IS}\s+(?:now\s+)?(?P<back>back\s+)?with\s+", re.IGNORECASE)
_ROMANCE = re.compile(
    r"\b(?:dating|date|dates|met|together|relationship|boyfriend|girlfriend|partner|love|"
    r"couple|romance|romantic|serious|engaged|wedding|moved in|kiss(?:ed)?|exes?)\b",
    re.IGNORECASE,
)
# "User's wife is Anna", "User's husband John ...", "User's girlfriend's name is Amy"
_PARTNER_POSS = rx(
    rf"(?:new\s+)?{_PARTNER}(?:'s\s+name\s+is|\s+(?:is|'s)(?:\s+{_NAMED})?|\s+{_NAMED})?"
)
_ENDED = rx(r"(?:broke|split)\s+up\s+with", rf"(?:got|{IS})\s+{ADV}divorced\s+from")
_SINGLE_END = (
    r"(?=\s*$|\s*[.,;!]|\s+(?:now|again|after|since|for|these|at\s+the\s+moment|today|"
    r"recently|last|this|on|and|but)\b)"
)
_SINGLE = re.compile(
    LEAD
    + r"(?:(?:broke|split)\s+up\s+with\s+(?:her|his|their|my)\s+"
    + r"(?:boyfriend|girlfriend|partner|wife|husband|fianc[eé]e?)\b"
    + rf"|(?:broke|split)\s+up{_SINGLE_END}"
    + rf"|{IS}\s+{ADV}single(?:\s+again)?{_SINGLE_END}"
    + rf"|(?:got|{IS})\s+{ADV}divorced{_SINGLE_END})",
    re.IGNORECASE,
)


# "Dr. Smith" is someone seen for care, not dated; "User" is no one's partner here.
_TITLES = wordset("dr doctor mr mrs ms miss prof professor user")
# "seeing Anton for a few weeks" is a relationship; "seeing Anna for therapy" is not.
_FOR_SOMETHING = re.compile(
    r"\s+for\s+(?!(?:a|an|about|over|almost|nearly|several|some|many|the\s+(?:past|last)|\d+|"
    r"two|three|four|five|six|seven|eight|nine|ten)\b)",
    re.IGNORECASE,
)


def relationship(rest: str) -> Hit | None:
    """A relationship stated by a verb after the subject ("is dating Mark")."""
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
    hit = _partner_hit(rest, _WITH, "dating")
    if hit is None or not _ROMANCE.search(rest[hit.end :]):
        return None
    back = _WITH.match(rest)
    if (back and back.group("back")) or re.match(r"\s+now\s*(?:$|[.,;!])", rest[hit.end :]):
        return hit
    return None


def _partner_hit(rest: str, pattern: re.Pattern[str], status: str) -> Hit | None:
    m = pattern.match(rest)
    if m is None:
        return None
    run = proper_run(rest[m.end() :], person=True)
    if run is None or run[0].split()[0].lower().rstrip(".") in _TITLES:
        return None
    if "seeing" in m.group(0).lower() and _FOR_SOMETHING.match(rest[m.end() + run[1] :]):
        return None  # "has been seeing Anna for her back": a therapist
    role = m.groupdict().get("role")
    if not status and role:
        status = PARTNER_ROLES[role.lower()]
    value = f"{status}:{run[0]}"
    return Hit("relationship", value, (m.start(), m.end()), m.end() + run[1])


def partner_possessive(rest: str) -> Hit | None:
    """A partner named after a possessive ("wife is Anna" after "User's")."""
    m = _PARTNER_POSS.match(rest)
    if m is None:
        return None
    status = PARTNER_ROLES[m.group("role").lower()]
    return _partner_hit(rest, _PARTNER_POSS, status)


_COUPLE_VERBS = {
    "engaged": r"got\s+engaged|are\s+engaged|have\s+gotten\s+engaged|'re\s+engaged",
    "married": r"got\s+married|are\s+married|'re\s+married|tied\s+the\s+knot|just\s+married",
    "dating": r"started\s+dating|are\s+dating|'re\s+dating|have\s+been\s+dating|"
    r"are\s+(?:back\s+)?together|'re\s+(?:back\s+)?together|got\s+back\s+together|"
    r"moved\s+in\s+together",
    "ended": r"broke\s+up|split\s+up|separated|got\s+divorced|are\s+divorcing",
}
_COUPLE = re.compile(
    r"^\s+and\s+(?P<who>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?|I)\s+(?:(?:just|finally|officially)\s+)*"
    r"(?P<verb>" + "|".join(f"(?P<{k}>{v})" for k, v in _COUPLE_VERBS.items()) + r")\b",
)


def couple(rest: str, partner: str | None = None) -> Hit | None:
    """ "Wren | and Jules got engaged", or with `partner` given, "Diego | and I got married":
    a relationship two people state together, recorded on the first one's side."""
    m = _COUPLE.match(rest)
    if m is None or (m.group("who") == "I") != (partner is not None):
        return None
    status = next(k for k in _COUPLE_VERBS if m.group(k))
    who = partner if partner is not None else m.group("who")
    if proper_run(who, person=True) is None or who.lower() in _TITLES:
        return None
    return Hit("relationship", f"{status}:{who}", (m.start("verb"), m.end()), m.end())
