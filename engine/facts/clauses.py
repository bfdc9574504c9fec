"""A summary cut into sentences and clauses, so each clause is read, and blocked, on its own.

The summariser joins several things into one line ("Nico has moved on from Coldplay, Wilco is
Nico's favourite band now"; "Marco used to live in Turin but now lives in Milan"). Read whole,
a fact in one clause is blocked by a word in another ("used to"), and a value named before
its owner is never found. Clauses end at commas, semicolons, colons, dashes, sentence ends,
and before joining words ("but", "because", "which", "if"), and before "and"/"or" where a
clause rather than a name follows ("and now works at", not "Porto and Lisbon"). The joining
words are kept with the clause they open: "if" or "which" says how it relates to the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hymem.facts.text import wordset

_ABBREVIATIONS = wordset("st. mt. ft. dr. jr. sr. inc. co. corp. ltd. mr. mrs. ms. vs. etc.")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_JOINERS = (
    "but so because although though while whereas when whenever once if unless until till "
    "before after since that which who whom whose where"
)
_BREAK = re.compile(
    r"\s*[,;:]\s+|\s+[-–—]{1,2}\s+|\s*[–—]\s*"
    r"|\s+(?=(?:and|or)\s+(?:[a-z]|I\b))"
    rf"|\s+(?=(?:{'|'.join(_JOINERS.split())})\s)"
)
_LEADING = re.compile(rf"(?:(?:and|or|{'|'.join(_JOINERS.split())})\s+)", re.IGNORECASE)


@dataclass(frozen=True)
class Clause:
    """One clause of a summary: where its words start and end in the text, which sentence it
    is in, the joining words before it, and whether its sentence is a question."""

    head: int  # where its joining words start (blocking words count from here)
    start: int
    end: int
    sentence: int
    first: bool  # the first clause of its sentence
    mark: str  # the punctuation before it: "," ";" ":" "-", or "" (a sentence start, a word)
    joiners: tuple[str, ...]  # lowercase: ("but",), ("and",), ("if",), ()
    question: bool


def _sentences(body: str) -> list[tuple[int, int, bool]]:
    """(start, end, is a question) of each sentence; end is before the final mark."""
    out: list[tuple[int, int, bool]] = []
    start = 0
    for m in _SENTENCE_END.finditer(body):
        before = body[start : m.start() + 1].split()
        word = before[-1].lower() if before else ""
        if m.group(0) == "." and (word in _ABBREVIATIONS or re.fullmatch(r"[a-z]\.", word)):
            continue
        out.append((start, m.start(), "?" in m.group(0)))
        start = m.end()
    if body[start:].strip():
        out.append((start, len(body), False))
    return out


def split_clauses(body: str) -> list[Clause]:
    """The clauses of `body`, in order."""
    clauses: list[Clause] = []
    for index, (s_start, s_end, question) in enumerate(_sentences(body)):
        cuts, marks = [s_start], [""]
        for m in _BREAK.finditer(body, s_start, s_end):
            cuts += [m.start(), m.end()]
            marks.append(m.group(0).strip()[:1])
        cuts.append(s_end)
        first = True
        for (start, end), mark in zip(zip(cuts[::2], cuts[1::2], strict=True), marks, strict=True):
            clause = _clause(body, start, end, index, first, mark, question)
            if clause is not None:
                clauses.append(clause)
                first = False
    return clauses


def _clause(
    body: str, start: int, end: int, sentence: int, first: bool, mark: str, question: bool
) -> Clause | None:
    while start < end and body[start].isspace():
        start += 1
    head = start
    joiners: list[str] = []
    while (m := _LEADING.match(body, start, end)) is not None:
        joiners.append(m.group(0).strip().lower())
        start = m.end()
    end = len(body[:end].rstrip())
    if start >= end:
        return None
    return Clause(head, start, end, sentence, first, mark, tuple(joiners), question)


def clause_text(body: str, clause: Clause) -> str:
    return body[clause.start : clause.end]
