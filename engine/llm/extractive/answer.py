"""Answer extraction for the extractive backend: find the best-supported sentence, then cut
the short span that answers the question's type (a date for "when", a place for "where", a
number for "how many", a name for "what is X called", otherwise the words the sentence adds
to the question).

The span rules are grammar, not any benchmark's wording: a time the sentence states beats the
moment it was said; a naming question takes the name after "called/named" or beside the noun
it names; "what <noun>" takes the other side of a copula ("my favourite food is ramen"); and
an answer made only of the question's own words is never given while the sentence adds more.

Short answers matter: questions are answered with phrases, and a whole sentence dilutes
token F1 with the question's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from hymem.llm.extractive.phrases import (
    MAX_SPAN_WORDS,
    NOT_A_HEAD,
    WEAK,
    WHAT_HEAD,
    adds,
    head_noun_phrase,
    is_naming_question,
    is_new,
    name_answer,
    question_stems,
)
from hymem.llm.extractive.scoring import (
    SELECT_MARGIN,
    CachedEmbedder,
    blend,
    coverage,
    normalise_answer,
    term_weights,
)
from hymem.llm.extractive.temporal import (
    MONTH_PATTERN,
    DatePhrasing,
    find_date_phrase,
    find_stated_date,
    format_day,
    rewrite_relative_dates,
)
from hymem.llm.extractive.text import (
    STOPWORDS,
    question_terms,
    short_names,
    stem,
    strip_captions,
)

QuestionType = Literal["when", "where", "who", "how_many", "how_long", "yesno", "what"]

_YESNO_START = re.compile(
    r"^(is|are|was|were|do|does|did|would|could|can|will|has|have|had|should)\b", re.IGNORECASE
)
_YESNO_MIN_COVERAGE = 0.6  # the same bar as the light verdict (COMPLETE_MIN_COVERAGE)
_NEGATION = re.compile(r"\b(not|never|no|none|nor)\b|n['’]t\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """One sentence an answer could come from, with what is known about where it was said."""

    text: str
    source_id: str
    time: datetime | None = None  # when it was said (anchor for relative dates)
    speaker: str | None = None
    order: int = 0  # position across all candidates, for deterministic ties

    @property
    def shown(self) -> str:
        return f"{self.speaker}: {self.text}" if self.speaker else self.text


def question_type(question: str) -> QuestionType:
    q = question.strip().lower()
    if re.search(r"\bhow long\b", q):
        return "how_long"
    if re.search(r"\bhow (many|much|often|old)\b", q):
        return "how_many"
    if re.search(r"\b(when|what (year|month|day|date|time)|which (year|month|day|date))\b", q):
        return "when"
    if re.search(r"\bwhere\b", q):
        return "where"
    if re.search(r"\b(who|whom|whose)\b", q):
        return "who"
    if _YESNO_START.match(q):
        return "yesno"
    return "what"


def score_candidates(
    question: str, candidates: list[Candidate], embedder: CachedEmbedder
) -> list[tuple[float, float, float]]:
    """(blended score, cosine, coverage) per candidate. Ranking uses coverage weighted by each
    term's rarity among the candidates; the coverage reported (and used for the completeness
    verdict) is the plain share of terms. The speaker's name counts as mentioned."""
    if not candidates:
        return []
    terms = question_terms(question)
    nicknames = short_names(question)
    weights = term_weights(terms, [c.shown for c in candidates])
    cosines = embedder.cosines(question, [c.shown for c in candidates])
    out = []
    for cand, cos in zip(candidates, cosines, strict=True):
        extra = cand.speaker.split() if cand.speaker else []
        cover = coverage(terms, cand.text, extra, short_names=nicknames)
        ranked = coverage(terms, cand.text, extra, weights, nicknames)
        out.append((blend(float(cos), ranked), float(cos), cover))
    return out


def best_index(scores: list[tuple[float, float, float]], candidates: list[Candidate]) -> int:
    return min(range(len(scores)), key=lambda i: (-round(scores[i][0], 9), candidates[i].order, i))


def date_answer(cand: Candidate, phrasing: DatePhrasing | None = None) -> str | None:
    """The date a sentence is about: a relative date it contains resolved against when it was
    said ("the week of 1 May 2023", or as `phrasing` words it), a date it names, a time it
    states without a year ("in March" -> "March"), or else the day it was said."""
    text = rewrite_relative_dates(cand.text, cand.time, phrasing) if cand.time else cand.text
    phrase = find_date_phrase(text)
    if phrase:
        return phrase[0].upper() + phrase[1:] if phrase[0].islower() else phrase
    stated = find_stated_date(text)
    if stated:
        return stated
    return format_day(cand.time) if cand.time else None


_DURATION = re.compile(
    r"\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|"
    r"several|a couple of)\s+(?:years?|months?|weeks?|days?|hours?|decades?)(?:\s+ago)?\b",
    re.IGNORECASE,
)
_COUNT = re.compile(
    r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|hundred)\b(?:\s+(?!(?:who|that|which|and|of|in)\b)[A-Za-z]+)?",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?:in|at|to|from|near|around|into|visited|visiting|visit)\s+(?:the\s+)?"
    r"(?P<place>(?:[A-Z][\w'-]*)(?:\s+(?:of\s+)?[A-Z][\w'-]*)*|[a-z]+(?:\s+[a-z]+)?)"
)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_SPAN_BREAK = re.compile(r"\s*(?:[;:()!?]|\s[-–—]\s|[–—]|,\s+(?:but|because|so|which)\b)\s*")


def generic_span(question: str, sentence: str) -> str:
    """The words the sentence adds to the question: the run of new words right after the last
    question term (answers follow their predicate: "painted [a sunset]"), else the run with
    the most new content words; trimmed of stopwords and capped in length. The sentence itself
    when it adds nothing."""
    qstems = question_stems(question)
    best: tuple[int, int, int, int, str] | None = None
    pos = 0
    q_seen = 0  # question terms met so far: runs after the last one win
    for piece in _SPAN_BREAK.split(sentence):
        tokens = list(re.finditer(r"[A-Za-z0-9][\w'’.-]*", piece))
        runs: list[tuple[bool, int, list[re.Match[str]]]] = []
        run: list[re.Match[str]] = []
        after_q = False
        for tok in tokens:
            w = tok.group(0).rstrip(".")
            if w.lower() not in STOPWORDS and stem(w) in qstems:
                if run:
                    runs.append((after_q, q_seen, run))
                run, after_q = [], True
                q_seen += 1
            else:
                run.append(tok)
        if run:
            runs.append((after_q, q_seen, run))
        for follows_q, seen, r in runs:
            while r and (r[0].group(0).lower() in STOPWORDS or r[0].group(0).lower() in WEAK):
                r = r[1:]
            while r and r[-1].group(0).lower().rstrip(".") in STOPWORDS:
                r = r[:-1]
            new = sum(1 for t in r if is_new(t.group(0), qstems))
            if not r or new == 0:
                continue
            r = r[:MAX_SPAN_WORDS]
            text = piece[r[0].start() : r[-1].end()].rstrip(".,")
            key = (int(follows_q), seen, new if follows_q else 0, -pos)
            if best is None or key > best[:4]:
                best = (*key, text)
            pos += 1
    return best[4] if best else sentence.strip()


def extract_answer(question: str, cand: Candidate, phrasing: DatePhrasing | None = None) -> str:
    """The short answer to `question` that `cand` supports, by question type; `phrasing`
    words relative dates (the general wording when None)."""
    qtype = question_type(question)
    text = strip_captions(cand.text) or cand.text
    if qtype == "when":
        found = date_answer(cand, phrasing)
        if found:
            return found
    elif qtype == "how_long":
        m = _DURATION.search(text)
        if m:
            return m.group(0)
    elif qtype == "how_many":
        m = _COUNT.search(text)
        if m:
            return m.group(0)
    elif qtype == "where":
        qstems = question_stems(question)
        for m in _PLACE.finditer(text):
            place = m.group("place")
            if any(w.lower() not in STOPWORDS and stem(w) not in qstems for w in place.split()):
                return place
    elif qtype == "who":
        qstems = question_stems(question)
        names: list[str] = [
            n
            for n in _NAME.findall(text)
            if n.lower() not in STOPWORDS
            and stem(n.split()[0]) not in qstems
            and n != (cand.speaker or "")
        ]
        if names:
            return names[0]
    elif qtype == "yesno":
        extra = cand.speaker.split() if cand.speaker else []
        if coverage(question_terms(question), text, extra) >= _YESNO_MIN_COVERAGE:
            return "No" if _NEGATION.search(text) else "Yes"
    elif qtype == "what":
        qstems = question_stems(question)
        if is_naming_question(question):
            name = name_answer(question, text, cand.speaker)
            if name:
                return name
        phrase = head_noun_phrase(question, text)
        if phrase and adds(phrase, qstems):
            return phrase
    return generic_span(question, text)


# Words that give an answer a time's shape; months only capitalised ("may" is a verb).
_WHEN_WORDS = re.compile(
    r"\b(?i:yesterday|today|ago|last|next|week|month|year|spring|summer|autumn|fall|winter)\b"
    rf"|\b\d{{4}}\b|\b{MONTH_PATTERN}\b"
)


def answers_type(question: str, answer: str) -> bool:
    """Whether `answer` has the shape the question asks for (a date for when, a number for
    how many, a duration for how long); other types only need some content word."""
    qtype = question_type(question)
    if not answer.strip():
        return False
    if qtype == "when":
        return find_date_phrase(answer) is not None or bool(_WHEN_WORDS.search(answer))
    if qtype == "how_long":
        return _DURATION.search(answer) is not None or bool(re.search(r"\d", answer))
    if qtype == "how_many":
        return _COUNT.search(answer) is not None
    return any(w.lower() not in STOPWORDS for w in re.findall(r"[\w']+", answer))


_LIST_ITEMS = 3  # a list answer gathers at most this many supported items


def is_list_question(question: str) -> bool:
    """'What activities/books/pets ...': a plural head noun asks for every item, which
    conversations mention in different places."""
    m = WHAT_HEAD.match(question)
    if m is None:
        return False
    head = m.group("head").lower()
    return head not in NOT_A_HEAD and head.endswith("s") and stem(head) != head


def compose_answer(
    question: str,
    candidates: list[Candidate],
    scores: list[tuple[float, float, float]],
    margin: float = SELECT_MARGIN,
    phrasing: DatePhrasing | None = None,
) -> str:
    """The best candidate's answer; for list questions, the distinct answers of up to
    `_LIST_ITEMS` candidates scoring within `margin` of the best, joined by commas."""
    best = best_index(scores, candidates)
    first = extract_answer(question, candidates[best], phrasing)
    if not is_list_question(question):
        return first
    top = scores[best][0]
    order = sorted(
        range(len(candidates)), key=lambda i: (-round(scores[i][0], 9), candidates[i].order)
    )
    items: dict[str, str] = {normalise_answer(first): first}
    for i in order:
        if len(items) >= _LIST_ITEMS or scores[i][0] < top - margin:
            break
        answer = extract_answer(question, candidates[i], phrasing)
        items.setdefault(normalise_answer(answer), answer)
    return ", ".join(items.values())
