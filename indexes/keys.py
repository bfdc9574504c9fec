"""What a summary is found by, beyond its own words (pure).

A fact is often the answer to the line before it: "Researching adoption agencies" answers
"What are your plans for the summer?", and a question about "Caroline's plans for the summer"
shares no word with the fact itself. So each summary carries `context`, the tail of the dialogue
line before its first source line, and the lexical index holds the summary's text and its
context together. The context is a key only: it is never shown, returned or summarised.

Measured on LoCoMo's development conversations: the tail of the line
before lifts hybrid summary recall@10 by about six points; the whole line does the same on
LoCoMo's short turns, but a LongMemEval assistant reply runs to hundreds of words, so the tail
is capped at `CONTEXT_WORDS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

CONTEXT_WORDS = 40  # the last words of the line before: a question sits at its end
_LINE_TIME = re.compile(r"^\[[^\]]*\]\s*")  # the `[YYYY-MM-DD HH:MM] ` of a segment line


def line_tail(line: str, words: int = CONTEXT_WORDS) -> str:
    """The last `words` words of one segment line, its timestamp dropped."""
    return " ".join(_LINE_TIME.sub("", line, count=1).split()[-words:])


def summary_context(
    segment_lines: Sequence[str], segment_turn_ids: Sequence[str], source_turn_ids: Sequence[str]
) -> str:
    """The tail of the segment line before the summary's first source line ("" when that is
    the segment's first line, or the sources are not the segment's)."""
    at = {t: i for i, t in enumerate(segment_turn_ids)}
    lines = [at[t] for t in source_turn_ids if t in at]
    if not lines or len(segment_lines) != len(segment_turn_ids):
        return ""
    first = min(lines)
    return line_tail(segment_lines[first - 1]) if first > 0 else ""


def lexical_text(text: str, context: str | None) -> str:
    """What the lexical index holds for a summary: its text, then its context."""
    return f"{text}\n{context}" if context else text


def merged_context(contexts: Sequence[str]) -> str:
    """A merged summary's context: its inputs' distinct contexts, in order."""
    return "\n".join(dict.fromkeys(c for c in contexts if c))


__all__ = ["CONTEXT_WORDS", "lexical_text", "line_tail", "merged_context", "summary_context"]
