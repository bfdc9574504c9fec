"""Whether a model summariser's facts come from the segment they are filed under.

A small model writing many segments' facts in one reply drifts: a 0.5B model repeated one
segment's sentence ("Lentils are so versatile.") under every later segment of its buffer, so
the facts of those segments (a favourite sport, a band, a trip) were never stored, and a
summary pointed at raw text that does not say it. A fact is grounded when it shares a content
word with its segment's lines, the speakers' names left out (every line of the segment has
those). The test is lenient on purpose: a faithful rewording keeps some of its line's words;
a sentence from elsewhere keeps none. A segment whose facts are all ungrounded is summarised
again by the extractive summariser (the flusher's per-segment fallback), so nothing said there
is lost; ungrounded facts beside grounded ones are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hymem.facts.text import content_words
from hymem.llm.roles import SegmentInput, SummariseOutput

# "[2023-02-26 14:09] Toby: ..." -> "Toby"; a line without a speaker has no name to leave out
_SPEAKER = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?([^:\[\]]{1,60}):")


def speaker_words(lines: Sequence[str]) -> frozenset[str]:
    """The words of the speakers' names in `lines`."""
    names: set[str] = set()
    for line in lines:
        match = _SPEAKER.match(line)
        if match:
            names |= content_words(match[1])
    return frozenset(names)


def grounded(fact: str, lines: Sequence[str]) -> bool:
    """Whether `fact` shares a content word, other than a speaker's name, with `lines`. A fact
    with no such word of its own ("Toby: ok") has nothing to check and passes."""
    names = speaker_words(lines)
    own = content_words(fact) - names
    if not own:
        return True
    said = set().union(*(content_words(line) for line in lines)) - names
    return bool(own & said)


@dataclass
class Grounded:
    """A summariser reply with its ungrounded facts taken out."""

    output: SummariseOutput
    # segments that had facts, none of them grounded: the extractive summariser redoes them
    ungrounded: list[str] = field(default_factory=list)
    dropped: int = 0  # ungrounded facts removed, those segments' included


def ground(segments: Sequence[SegmentInput], output: SummariseOutput) -> Grounded:
    """`output` with each fact kept only if grounded in its own segment's lines."""
    lines = {seg.segment_id: seg.lines for seg in segments}
    kept = output.model_copy(deep=True)
    result = Grounded(kept)
    for summary in kept.segments:
        own = lines.get(summary.segment_id)
        if own is None or not summary.facts:
            continue
        facts = [f for f in summary.facts if grounded(f.text, own)]
        result.dropped += len(summary.facts) - len(facts)
        if not facts:
            result.ungrounded.append(summary.segment_id)
        summary.facts = facts
    return result


__all__ = ["Grounded", "ground", "grounded", "speaker_words"]
