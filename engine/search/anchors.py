"""A question's anchors: the names it shares with most of what it retrieves (pure).

In a long conversation nearly every memory names one of a few people, so a question's name
("What activities has Melanie done with her family?") matches half the store equally well and
drowns the part that discriminates ("activities ... with her family") in the single vector a
bi-encoder makes of the question. An anchor is a capitalised word of the question (not its
first, which is capitalised by position) found in at least `ANCHOR_SHARE` of the candidates
the plain search returned: a name the memory is full of. The light path then ranks by the
question without its anchors (the aspect) and favours hits that name an anchor, instead of
letting the name decide the ranking.

Measured on LoCoMo's development conversations before the light path kept it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

ANCHOR_SHARE = 0.3  # a name in at least this share of the candidates is an anchor

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_POSSESSIVE = re.compile(r"['’].*$")


@dataclass(frozen=True, slots=True)
class Anchors:
    """The anchor names (as written in the question) and the question without them."""

    names: tuple[str, ...]
    aspect: str

    def named_in(self, text: str) -> bool:
        """Whether `text` names one of the anchors (whole word, any case)."""
        return bool(self.names) and _pattern(self.names).search(text) is not None


@lru_cache(maxsize=256)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled alternation per name set: the light path tests hundreds of texts."""
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", flags=re.IGNORECASE)


def _mentions(text: str, name: str) -> bool:
    return _pattern((name,)).search(text) is not None


def capitalised(question: str) -> Anchors:
    """Every capitalised word after the first as an anchor: the likely anchors, known before
    any search, so the aspect can be embedded in one batch with the question (`find_anchors`
    usually agrees; where it does not, its aspect is embedded on its own)."""
    names = [_POSSESSIVE.sub("", w) for w in _WORD.findall(question)[1:] if w[:1].isupper()]
    return _without(question, list(dict.fromkeys(names)))


def _without(question: str, names: list[str]) -> Anchors:
    if not names:
        return Anchors((), question)
    kept = [w for w in question.split() if _POSSESSIVE.sub("", w.strip('?!.,;:"()')) not in names]
    return Anchors(tuple(names), " ".join(kept))


def find_anchors(question: str, candidates: Sequence[str], share: float = ANCHOR_SHARE) -> Anchors:
    """The question's anchors among `candidates` (the texts its plain search returned)."""
    names: list[str] = []
    for word in _WORD.findall(question)[1:]:
        name = _POSSESSIVE.sub("", word)
        if not name[:1].isupper() or name.lower() in {n.lower() for n in names}:
            continue
        found = sum(1 for text in candidates if _mentions(text, name))
        if candidates and found / len(candidates) >= share:
            names.append(name)
    return _without(question, names)


__all__ = ["ANCHOR_SHARE", "Anchors", "capitalised", "find_anchors"]
