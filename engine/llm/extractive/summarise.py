"""The extractive summariser: key-information sentences per segment, without a model.

Each line is split into sentences; chit-chat (greetings, thanks, reactions, questions) is
dropped, sentences carrying people, places, times, numbers, events or preferences are kept,
pronouns are resolved to the speakers, relative dates are rewritten against the line's time,
and shared-photo captions are kept as facts. Every segment with any content keeps at least one
fact, so that the deep path can always reach it through a summary.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TypeVar

from hymem.llm.extractive.pronouns import resolve_first_person, resolve_second_person
from hymem.llm.extractive.temporal import (
    DatePhrasing,
    find_relative_dates,
    rewrite_relative_dates,
)
from hymem.llm.extractive.text import (
    PHATIC,
    STOPWORDS,
    DialogueLine,
    caption_marker,
    caption_of,
    parse_line,
    split_sentences,
    strip_captions,
    words,
    wordset,
)
from hymem.llm.roles import FactItem, FactSource, SegmentInput, SegmentSummary
from hymem.prompts.schemas import FACT

T = TypeVar("T")

_PREFERENCE = wordset(
    """love loves loved like likes liked enjoy enjoys enjoyed prefer prefers favorite favourite
    hate hates want wants plan plans planning dream dreams interested passionate keen into
    hoping goal goals"""
)
_NUMBER = re.compile(
    r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred)\b",
    re.IGNORECASE,
)
_MIN_CONTENT = 2  # fewer content words than this carries no fact
_RICH_CONTENT = 4  # this many content words is informative even without a marked signal
# A summary tier holds key information, not a copy of the dialogue: a long reply (an assistant's
# ten-point answer) keeps its most content-rich sentences. Without a cap LongMemEval's histories
# produced ~8 facts per turn, whose embedding cost 4x the turns' own.
MAX_FACTS_PER_LINE = 4


def _name_parts(speakers: list[str]) -> set[str]:
    """Speaker names and their short forms ('Mel' for Melanie): greeting someone is no fact."""
    parts: set[str] = set()
    for s in speakers:
        for w in s.split():
            parts.add(w.lower())
            if len(w) > 3:
                parts.add(w[:3].lower())
    return parts


def content_words(sentence: str, names: set[str]) -> list[str]:
    return [
        w
        for w in words(sentence)
        if w.lower() not in STOPWORDS and w.lower() not in PHATIC and w.lower() not in names
    ]


def is_informative(sentence: str, names: set[str]) -> bool:
    """Keep sentences that state something worth remembering; drop chit-chat and questions."""
    s = sentence.strip()
    if not s or s.endswith("?"):
        return False
    content = content_words(s, names)
    if len(content) < _MIN_CONTENT:
        return False
    toks = words(s)
    proper = any(w[:1].isupper() and w.lower() not in names and w != "I" for w in toks[1:])
    signal = (
        proper
        or _NUMBER.search(s) is not None
        or bool(find_relative_dates(s, datetime(2000, 1, 1)))
        or any(w.lower() in _PREFERENCE for w in toks)
        or any(w.lower().endswith("ed") for w in content)
        or bool(re.search(r"\b(I|I'm|I've|I'd|We|we|my|our)\b", s))
    )
    return signal or len(content) >= _RICH_CONTENT


def _attribute(fact: str, speaker: str | None) -> str:
    """Make sure the fact names who said it, so it stands alone."""
    if not speaker or speaker.split()[0].lower() in fact.lower():
        return fact
    return f"{speaker}: {fact}"


_LEAD_IN = re.compile(
    r"^(?:(?i:so|well|and|but|oh|anyway|also|btw|by the way|yeah|yep|yes|wow|hey|hi|hello|ok|"
    r"okay|thanks|thank you)(?:,?\s+[A-Z][a-z]+(?=[,!.]))?[,!.]?\s+)+"
)


def _tidy(fact: str) -> str:
    """Collapse whitespace and drop a lead-in ("Yeah, ", "Hey Caroline, ") before the fact."""
    fact = re.sub(r"\s+", " ", fact).strip()
    fact = _LEAD_IN.sub("", fact)
    return fact[:1].upper() + fact[1:] if fact else fact


def _line_facts(
    line: DialogueLine,
    anchor: datetime | None,
    listener: str | None,
    names: set[str],
    phrasing: DatePhrasing | None = None,
) -> tuple[list[tuple[str, str]], tuple[str, str] | None]:
    """((fact, source sentence) pairs, best fallback pair) of one dialogue line."""
    speaker = line.speaker
    facts: list[tuple[str, str]] = []
    caption = caption_of(line.text)
    if caption:
        who = speaker or "Someone"
        facts.append((f"{who} shared {caption}.", caption_marker(line.text) or caption))
    fallback: tuple[str, str] | None = None
    fallback_len = 0
    kept: list[tuple[int, tuple[str, str]]] = []  # (content words, fact) in dialogue order
    for sentence in split_sentences(strip_captions(line.text)):
        resolved = _resolve(sentence, speaker, listener, anchor, phrasing)
        n_content = len(content_words(sentence, names))
        if n_content > fallback_len and not sentence.strip().endswith("?"):
            fallback, fallback_len = (_attribute(resolved, speaker), sentence), n_content
        if is_informative(sentence, names):
            kept.append((n_content, (_attribute(resolved, speaker), sentence)))
    facts.extend(_richest(kept, MAX_FACTS_PER_LINE - len(facts)))
    return facts, fallback


def _richest(kept: list[tuple[int, T]], limit: int) -> list[T]:
    """The `limit` facts with most content words (earlier first on ties), in dialogue order."""
    if len(kept) <= limit:
        return [fact for _, fact in kept]
    order = sorted(range(len(kept)), key=lambda i: (-kept[i][0], i))[: max(limit, 0)]
    return [kept[i][1] for i in sorted(order)]


def _resolve(
    sentence: str,
    speaker: str | None,
    listener: str | None,
    anchor: datetime | None,
    phrasing: DatePhrasing | None = None,
) -> str:
    text = sentence
    if speaker:
        text = resolve_first_person(text, speaker)
    if listener:
        text = resolve_second_person(text, listener)
    text = rewrite_relative_dates(text, anchor, phrasing)
    return _tidy(text)


def summarise_segment(
    segment: SegmentInput, phrasing: DatePhrasing | None = None
) -> SegmentSummary:
    """Key-information sentences of one segment, in dialogue order, without duplicates, each
    with the line and verbatim sentence it came from. Relative dates take the general wording
    unless `phrasing` words them (see `hymem.llm.extractive.temporal`)."""
    lines = [parse_line(raw) for raw in segment.lines]
    speakers = list(dict.fromkeys(line.speaker for line in lines if line.speaker))
    names = _name_parts(speakers)
    facts: dict[str, FactSource] = {}
    best_fallback: tuple[int, str, FactSource] | None = None
    for index, line in enumerate(lines):
        if not line.text:
            continue
        listener = None
        if line.speaker and len(speakers) == 2:
            listener = speakers[1] if line.speaker == speakers[0] else speakers[0]
        anchor = line.time or segment.session_time
        line_facts, fallback = _line_facts(line, anchor, listener, names, phrasing)
        for fact, source in line_facts:
            facts.setdefault(fact, FactSource(line=index, text=source))
        if fallback:
            n = len(content_words(fallback[0], names))
            if best_fallback is None or n > best_fallback[0]:
                best_fallback = (n, fallback[0], FactSource(line=index, text=fallback[1]))
    if not facts and best_fallback is not None and best_fallback[0] > 0:
        facts[best_fallback[1]] = best_fallback[2]
    items = [FactItem(text=f, turns=[src.line + 1]) for f, src in facts.items()]
    summary = SegmentSummary(segment_id=segment.segment_id, facts=items)
    summary.sources = {FACT.validate_python(f): src for f, src in facts.items()}
    return summary
