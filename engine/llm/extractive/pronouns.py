"""Conservative pronoun resolution for dialogue facts: "I"/"my"/"me" become the speaker,
"you" the other speaker of a two-person exchange (only where it addresses them), "we" the
speaker's family or friends only when the sentence says which.

A fact must stand alone once it leaves the dialogue ("Caroline is keen on counseling", not
"I'm keen on counseling"); a wrong resolution is worse than none, so anything unclear stays.
"""

from __future__ import annotations

import re

from hymem.llm.extractive.text import wordset

_KEEP_FORM = wordset(
    """was did had can could will would should might must may shall used didn't can't
    couldn't won't wouldn't shouldn't wasn't hadn't mustn't got went made took saw bought ran
    began came gave found felt kept left met paid read said sold sent spent taught thought
    told won wrote built brought caught chose drew drove ate fell flew forgot grew heard held
    knew lost sang sat slept spoke stood swam threw understood woke wore"""
)
_ADVERBS = wordset(
    """really just also always never still finally recently usually often sometimes actually
    totally definitely even only already truly absolutely mostly currently"""
)
_SPECIAL = {
    "am": "is",
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "'m": "is",
}
_FAMILY = re.compile(
    r"\b(kids?|children|family|husband|wife|son|daughter|partner|parents?|mom|dad|"
    r"brothers?|sisters?)\b",
    re.IGNORECASE,
)
_FRIENDS = re.compile(r"\b(friends?|buddies|team|group|class(mates)?)\b", re.IGNORECASE)


def third_person(verb: str) -> str:
    """The third-person-singular present form of a verb that followed "I" or "you"."""
    low = verb.lower()
    if low in _SPECIAL:
        return _SPECIAL[low]
    past = low.endswith("ed") and not low.endswith("eed")  # "need", "feed" are present
    if low in _KEEP_FORM or past or low.endswith("n't") or not low.isalpha():
        return verb
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    return verb + "s"


def _verb_after(rest: str) -> tuple[str, int]:
    """The adverbs and first verb at the start of `rest`, made third person, and how many
    characters of `rest` they span."""
    adverbs = "|".join(sorted(_ADVERBS))
    m = re.match(r"(\s+)((?:(?:" + adverbs + r")\s+)*)([A-Za-z']+)", rest)
    if m is None:
        return "", 0
    return m.group(1) + m.group(2) + third_person(m.group(3)), m.end()


_CONTRACTIONS = {"'m": "is", "'ve": "has", "'d": "would", "'ll": "will", "'re": "is"}


def _sub_subject(text: str, pronoun: str, name: str) -> str:
    """Replace subject `pronoun` (with contractions) by `name`, fixing the verb's agreement."""
    out: list[str] = []
    pos = 0
    pattern = re.compile(rf"\b{pronoun}(?P<c>['’](?:m|ve|d|ll|re))?(?![\w'’])", re.IGNORECASE)
    for m in pattern.finditer(text):
        if pronoun.lower() == "i" and m.group(0)[0] != "I":
            continue  # lowercase "i" is rarely the pronoun in rendered text
        out.append(text[pos : m.start()])
        contraction = (m.group("c") or "").replace("’", "'").lower()
        if contraction:
            out.append(f"{name} {_CONTRACTIONS[contraction]}")
            pos = m.end()
            continue
        verb, used = _verb_after(text[m.end() :])
        out.append(name + verb)
        pos = m.end() + used
    out.append(text[pos:])
    return "".join(out)


def resolve_first_person(sentence: str, speaker: str) -> str:
    """I/me/my/mine/myself -> the speaker; "we"/"our" -> "<speaker> and family/friends" only
    when the sentence names family or friends."""
    text = _sub_subject(sentence, "I", speaker)
    text = re.sub(r"\bmy\b", f"{speaker}'s", text, flags=re.IGNORECASE)
    text = re.sub(r"\bmine\b", f"{speaker}'s", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(me|myself)\b(?!-)", speaker, text, flags=re.IGNORECASE)
    group = None
    if _FAMILY.search(sentence):
        group = f"{speaker} and family"
    elif _FRIENDS.search(sentence):
        group = f"{speaker} and friends"
    if group:
        text = re.sub(r"\b[Ww]e(['’](?:re|ve|ll|d))?\b", lambda m: _we(m, group), text)
        text = re.sub(r"\b[Oo]ur\b", f"{speaker}'s", text)
    return text


def _we(m: re.Match[str], group: str) -> str:
    c = (m.group(1) or "").replace("’", "'").lower()
    return group + {"": "", "'re": " are", "'ve": " have", "'ll": " will", "'d": " would"}[c]


def resolve_second_person(sentence: str, listener: str) -> str:
    """ "you"/"your" -> the listener where it addresses them: "your X", "you" opening a
    clause, and "you" after for/to/with/of/about; generic "you" ("it makes you feel") stays."""
    text = re.sub(r"\byour\b", f"{listener}'s", sentence, flags=re.IGNORECASE)
    text = re.sub(r"\byourself\b", listener, text, flags=re.IGNORECASE)
    text = re.sub(
        r"\b(for|to|with|of|about|at)\s+you\b(?!['’])",
        lambda m: f"{m.group(1)} {listener}",
        text,
        flags=re.IGNORECASE,
    )
    # a clause-initial subject "you": sentence start or after and/but/so/that/comma
    pieces = re.split(r"((?:^|[,;]\s*|\b(?:and|but|so|that)\s+))(?=[Yy]ou\b)", text)
    out: list[str] = []
    for piece in pieces:
        if re.match(r"[Yy]ou\b", piece):
            piece = _sub_subject(piece, "you", listener)
        out.append(piece)
    return "".join(out)
