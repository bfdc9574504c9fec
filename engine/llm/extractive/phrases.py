"""Spans for "what" questions, and the word tests every span rule shares.

A "what/which <noun>" question is answered by the phrase around that noun in the sentence: a
name it introduces, the other side of a copula ("my favourite food is ramen" -> "ramen"), or
the modifiers before it ("an LGBTQ+ counseling workshop"). A naming question ("what is X
called", "what is the name of X", "what did Y name X") is answered by the name. These are
grammar-level rules, written against no benchmark's wording; the extractive answerer
(`answer.py`) applies them after picking the best-supported sentence.
"""

from __future__ import annotations

import re

from hymem.llm.extractive.temporal import MONTHS
from hymem.llm.extractive.text import PHATIC, STOPWORDS, question_terms, stem, wordset

MAX_SPAN_WORDS = 12  # an answer is a phrase: longer spans are cut here


def question_stems(question: str) -> set[str]:
    """The question's content stems and the stems of all its words."""
    return set(question_terms(question)) | {stem(w) for w in question.split()}


# Words that rarely answer a "what" question on their own: light verbs and chit-chat.
WEAK = wordset("go do make get take have be want try let feel say tell put give come") | PHATIC


def is_new(word: str, qstems: set[str]) -> bool:
    """A content word the question does not already say (nor a light verb or chit-chat)."""
    w = word.lower().rstrip(".")
    return (
        w not in STOPWORDS
        and w not in WEAK
        and stem(word) not in WEAK
        and (stem(word) not in qstems)
    )


def adds(answer: str, qstems: set[str]) -> bool:
    """Whether `answer` says something the question does not: one new content word."""
    return any(is_new(w, qstems) for w in re.findall(r"[A-Za-z0-9][\w'’-]*", answer))


_NAMING_QUESTION = re.compile(r"\b(?:call(?:s|ed)?|nam(?:e|es|ed)|titled?)\b", re.IGNORECASE)
_NAME_RUN = r"\"[^\"]+\"|(?:[Tt]he\s+)?[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*"
# "called Luna", "is named Oliver", "name is Max", "named my turtle Shelly", "call our boat
# Seabird": a naming word, at most a determiner and two lowercase words, then the name.
_NAMED_AS = re.compile(
    r"\b(?:call(?:s|ed)?|nam(?:e|es|ed)|titled|name\s+(?:is|was)|name['’]s)\s+"
    r"(?:(?:my|our|his|her|their|its|the|a|an)\s+)?(?:[a-z][\w'’-]*\s+){0,2}?"
    rf"(?P<name>{_NAME_RUN})"
)
_NAME_IN_TEXT = re.compile(_NAME_RUN)
# Capitalised words that are not names: months, weekdays, the time words that start sentences.
_NOT_A_NAME = frozenset(m.lower() for m in MONTHS) | wordset(
    "monday tuesday wednesday thursday friday saturday sunday i yesterday today tomorrow"
)


def is_naming_question(question: str) -> bool:
    """'What is X called/named?', 'What is the name of X?', 'What did Y name X?'."""
    return bool(_NAMING_QUESTION.search(question))


def name_answer(question: str, sentence: str, speaker: str | None = None) -> str | None:
    """The name a sentence gives: the one after a naming word ("is called Luna"), else a
    capitalised name or quoted title right after a noun of the question ("cat Luna", "puppy,
    Max"), else its first name; never the question's own names or the speaker's."""
    qstems = question_stems(question)

    def usable(name: str) -> bool:
        first = name.strip('"').split()[0]
        if name[:1] != '"' and first.lower() == "the":
            first = name.split()[1] if len(name.split()) > 1 else first
        return (
            first.lower() not in STOPWORDS
            and first.lower() not in _NOT_A_NAME
            and stem(first) not in qstems
            and name != (speaker or "")
        )

    for m in _NAMED_AS.finditer(sentence):
        if usable(m.group("name")):
            return m.group("name")
    names = [m for m in _NAME_IN_TEXT.finditer(sentence) if usable(m.group(0))]
    for m in names:
        before = re.search(r"([A-Za-z][\w'’-]*)[\s,]*$", sentence[: m.start()])
        if before and stem(before.group(1)) in qstems:
            return m.group(0)
    return names[0].group(0) if names else None


WHAT_HEAD = re.compile(
    r"^\s*(?:what|which)\s+(?:(?:kind|type|sort|types|kinds)\s+of\s+)?(?P<head>[A-Za-z][\w-]*)",
    re.IGNORECASE,
)
NOT_A_HEAD = wordset(
    "is are was were did does do has have had can could will would should might the a an"
)


_COPULA = (
    r"(?:is|are|was|were|(?:has|have|had)\s+(?:always\s+|long\s+|ever\s+)?been|will\s+be|"
    r"would\s+be)"
)
_COPULA_AFTER = re.compile(rf"^\s*['’]?\s*{_COPULA}\s+(?P<rest>.+)", re.IGNORECASE | re.DOTALL)
_COPULA_BEFORE = re.compile(
    rf"(?P<subject>[^,;:.!?]*?)\s+{_COPULA}\s+(?:(?:my|our|his|her|their|your|its|the|a|an)\s+)?$",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"\s*(?:[,;:()!?]|\.(?:\s|$)|\s[-–—]\s|[–—]|\s(?:but|because|so)\s)")


def _trimmed_words(text: str, qstems: set[str], *, keep_tail: bool = False) -> str | None:
    """`text` without leading (or, with `keep_tail`, only its trailing run of) function words,
    light verbs and question words; None when no new content word is left."""
    tokens = list(re.finditer(r"[A-Za-z0-9][\w'’+-]*", text))
    if keep_tail:  # the subject's last words: "Omar said green tea" -> "green tea"
        start = len(tokens)
        while start > 0 and is_new(tokens[start - 1].group(0), qstems):
            start -= 1
        tokens = tokens[start:]
    else:
        while tokens and not is_new(tokens[0].group(0), qstems):
            tokens = tokens[1:]
        while tokens and tokens[-1].group(0).lower() in STOPWORDS:
            tokens = tokens[:-1]
    tokens = tokens[:MAX_SPAN_WORDS]
    if not tokens:
        return None
    return text[tokens[0].start() : tokens[-1].end()]


def head_noun_phrase(question: str, sentence: str) -> str | None:
    """For "what/which <noun>" questions, the sentence's phrase around that noun: a name it
    introduces ('the book "Becoming Nicole"', "my home country, Sweden" -> the name alone),
    the other side of a copula ("my favourite food is ramen", "ramen is my favourite food" ->
    "ramen"; an evaluation such as "was great" does not count), or the modifiers before it
    ("an LGBTQ+ counseling workshop")."""
    m = WHAT_HEAD.match(question)
    if m is None or m.group("head").lower() in NOT_A_HEAD:
        return None
    head = stem(m.group("head"))
    qstems = question_stems(question)
    tokens = list(re.finditer(r"[A-Za-z0-9][\w'’+.-]*|\"[^\"]+\"", sentence))
    for i, tok in enumerate(tokens):
        if stem(tok.group(0).rstrip(".,")) != head:
            continue
        after = sentence[tok.end() :]
        named = re.match(r"[,:]?\s*(\"[^\"]+\"|[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)", after)
        if named and stem(named.group(1).split()[0].strip('"')) not in qstems:
            return named.group(1)
        copula = _COPULA_AFTER.match(after)
        if copula:
            complement = _trimmed_words(_CLAUSE_END.split(copula.group("rest"))[0], qstems)
            if complement:
                return complement
        start = i
        while start > 0 and i - start < 3:
            prev = tokens[start - 1].group(0)
            if prev.lower() in STOPWORDS or prev.lower() in WEAK or stem(prev) in qstems:
                break
            start -= 1
        subject = _COPULA_BEFORE.search(sentence[: tokens[start].start()])
        if subject:
            found = _trimmed_words(subject.group("subject"), qstems, keep_tail=True)
            if found:
                return found
        if start < i:
            return sentence[tokens[start].start() : tok.end()].rstrip(".,")
        return None
    return None
