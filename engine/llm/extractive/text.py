"""Text primitives of the extractive backend: tokens, stems, sentences and dialogue lines.

Everything here is pure and deterministic. The stemmer is deliberately light (suffix stripping
plus a table of common irregular verbs): it only has to make "went" meet "go" and "painting"
meet "painted", not be linguistically complete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from hymem.core.time import try_parse_timestamp


def wordset(text: str) -> frozenset[str]:
    """A vocabulary written as whitespace-separated words (easier to read than a list)."""
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)*")

STOPWORDS = wordset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    either else ever few for from further get gets got had has have having he her here hers
    herself him himself his how i if in into is it its itself just let like lot me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own
    really same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up us very was we were what when where
    which while who whom whose why will with would you your yours yourself yourselves yet
    ok okay oh yeah yes much many kind sort thing things something anything still even well
    gonna wanna gotta i'm i've i'd i'll you're you've you'd you'll it's that's there's what's
    we're we've they're he's she's don't doesn't didn't can't won't isn't wasn't aren't"""
)

# Question words and auxiliaries carry the question's form, not its content.
QUESTION_WORDS = wordset(
    "what when where who whom whose which why how did does do is are was were has have had "
    "kind type sort name"
)

# Chit-chat vocabulary: a sentence made only of these (and stopwords) says nothing to remember.
PHATIC = wordset(
    """hey hi hello hiya bye goodbye thanks thank thx welcome wow cool awesome great nice good
    glad happy sorry congrats congratulations amazing awesome lovely wonderful fantastic
    sweet haha hahaha lol omg aww yay hope hopefully sure totally definitely absolutely
    exactly indeed right true agree see talk soon care catch later take chat guess mean know
    think feel sounds sound looks look seems seem super pretty fun tell hear heard glad keep
    stuff guys buddy dear friend man wish luck best cheers night morning day doing going
    ah um uh hmm well anyway thats cute beautiful incredible inspiring proud totally"""
)

_IRREGULAR = {
    "went": "go",
    "gone": "go",
    "goes": "go",
    "going": "go",
    "made": "make",
    "took": "take",
    "taken": "take",
    "saw": "see",
    "seen": "see",
    "bought": "buy",
    "ran": "run",
    "began": "begin",
    "begun": "begin",
    "came": "come",
    "got": "get",
    "gotten": "get",
    "gave": "give",
    "given": "give",
    "found": "find",
    "felt": "feel",
    "kept": "keep",
    "left": "leave",
    "met": "meet",
    "paid": "pay",
    "read": "read",
    "said": "say",
    "sold": "sell",
    "sent": "send",
    "spent": "spend",
    "taught": "teach",
    "thought": "think",
    "told": "tell",
    "won": "win",
    "wrote": "write",
    "written": "write",
    "built": "build",
    "brought": "bring",
    "caught": "catch",
    "chose": "choose",
    "chosen": "choose",
    "drew": "draw",
    "drawn": "draw",
    "drove": "drive",
    "driven": "drive",
    "ate": "eat",
    "eaten": "eat",
    "fell": "fall",
    "fallen": "fall",
    "flew": "fly",
    "flown": "fly",
    "forgot": "forget",
    "grew": "grow",
    "grown": "grow",
    "heard": "hear",
    "held": "hold",
    "knew": "know",
    "known": "know",
    "learnt": "learn",
    "lost": "lose",
    "sang": "sing",
    "sung": "sing",
    "sat": "sit",
    "slept": "sleep",
    "spoke": "speak",
    "spoken": "speak",
    "stood": "stand",
    "swam": "swim",
    "swum": "swim",
    "threw": "throw",
    "understood": "understand",
    "woke": "wake",
    "wore": "wear",
    "was": "be",
    "were": "be",
    "been": "be",
    "is": "be",
    "am": "be",
    "are": "be",
    "had": "have",
    "has": "have",
    "did": "do",
    "done": "do",
    "does": "do",
    "children": "child",
    "kids": "kid",
    "men": "man",
    "women": "woman",
    "people": "person",
    "mice": "mouse",
    "feet": "foot",
    "teeth": "tooth",
}


def words(text: str) -> list[str]:
    """Word tokens in their original case; apostrophe contractions stay whole ("I'm")."""
    return [w.replace("’", "'") for w in _WORD.findall(text)]


# Distinct words whose stems are memoised: a conversation's vocabulary fits many times over,
# and a memo never changes a result, only how often the rules run.
STEM_CACHE_SIZE = 65_536


@lru_cache(maxsize=STEM_CACHE_SIZE)
def stem(word: str) -> str:
    """Light English stem: lowercase, irregular-verb table, one inflection stripped, a final
    'e' and a doubled final consonant dropped (hike/hiked/hiking -> hik, running -> run)."""
    w = word.lower().replace("’", "'")
    w = re.sub(r"'s$", "", w)
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or not w.isalpha():
        return w
    for suffix, repl in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if not w.endswith(suffix) or len(w) - len(suffix) < 3:
            continue
        if suffix == "s" and w.endswith(("ss", "us", "is")):
            continue
        if suffix == "es" and not re.search(r"(ss|x|z|ch|sh)$", w[:-2]):
            continue
        w = w[: -len(suffix)] + repl
        break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w


def is_stopword(word: str) -> bool:
    return word.lower().replace("’", "'") in STOPWORDS


def content_stems(text: str, *, drop: frozenset[str] = frozenset()) -> list[str]:
    """Stems of the content words of `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    for w in words(text):
        lw = w.lower()
        if lw in STOPWORDS or lw in drop:
            continue
        seen.setdefault(stem(w), None)
    return list(seen)


def question_terms(question: str) -> list[str]:
    """The question's content stems: what an answer's evidence must mention."""
    return content_stems(question, drop=QUESTION_WORDS)


def short_names(question: str) -> frozenset[str]:
    """Stems of short capitalised words past the first ("Mel"): possible nicknames."""
    toks = words(question)
    return frozenset(stem(w) for w in toks[1:] if w[:1].isupper() and len(w) <= 4 and w != "I")


_ABBREV = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e)\.$", re.IGNORECASE)
_SENT_END = re.compile(r"(?<=[.!?])[\"'”)]*\s+(?=[\"'“(]?[A-Z0-9\[])")


def split_sentences(text: str) -> list[str]:
    """Sentences of one utterance; bracketed captions ("[shares a photo of ...]") stay whole."""
    text = text.strip()
    if not text:
        return []
    parts: list[str] = []
    for chunk in re.split(r"(\[[^\]]*\])", text):
        chunk = chunk.strip()
        if not chunk:
            continue
        if chunk.startswith("[") and chunk.endswith("]"):
            parts.append(chunk)
            continue
        start = 0
        for m in _SENT_END.finditer(chunk):
            candidate = chunk[start : m.start()].strip()
            if _ABBREV.search(candidate):
                continue
            if candidate:
                parts.append(candidate)
            start = m.end()
        tail = chunk[start:].strip()
        if tail:
            parts.append(tail)
    return parts


@dataclass(frozen=True)
class DialogueLine:
    """One rendered dialogue line: `[2023-05-08 13:56] Caroline: text`."""

    time: datetime | None
    speaker: str | None
    text: str


_LINE = re.compile(
    r"^\s*(?:\[(?P<time>[^\]]*)\]\s*)?(?:(?P<speaker>[^:\[\]]{1,60}?):\s+)?(?P<text>.*)$"
)


def parse_line(line: str) -> DialogueLine:
    """Split a segment line into its time, speaker and text; missing parts come back None."""
    m = _LINE.match(line.strip())
    if m is None:  # pragma: no cover - the pattern matches any string
        return DialogueLine(None, None, line.strip())
    raw_time = m.group("time")
    time = try_parse_timestamp(raw_time) if raw_time else None
    text = m.group("text").strip()
    if raw_time and time is None:  # a bracket that was not a time belongs to the text
        text = f"[{raw_time}] {text}".strip()
    speaker = m.group("speaker")
    return DialogueLine(time, speaker.strip() if speaker else None, text)


def parse_lines(text: str) -> list[DialogueLine]:
    return [parse_line(line) for line in text.splitlines() if line.strip()]


_CAPTION = re.compile(
    r"\[(?:(?:she|he|they|[A-Z]\w*)\s+)?(?:shares?|shared|sends?|sent|posts?|posted)\s+"
    r"(?P<what>[^\]]+)\]",
    re.IGNORECASE,
)


def caption_of(sentence: str) -> str | None:
    """The shared-media description inside a caption marker, e.g. 'a photo of a dog'."""
    m = _CAPTION.search(sentence)
    return m.group("what").strip().rstrip(".") if m else None


def caption_marker(text: str) -> str | None:
    """The whole caption marker ("[shares a photo of a dog]") as it stands in the text."""
    m = _CAPTION.search(text)
    return m.group(0) if m else None


def strip_captions(text: str) -> str:
    return _CAPTION.sub("", text).strip()
