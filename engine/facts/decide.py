"""What a new summary means for the user's nearest active summaries, decided without a model.

The write path hands over the new summary and its few nearest neighbours; the answer is one of

- ``duplicate``: a neighbour states the same fact (same subject, relation and value), or the
  same words; the new one merges into that survivor, so there is no second active row for one
  fact. This holds even when the new text adds words ("User moved to Porto, the flat is
  lovely" after "User lives in Porto"): the caller keeps the more detailed text of the two
  (`Reading.detail` says what each adds), since a fact stated twice is one memory.
- ``supersede``: the same subject's same single-valued fact now has another value ("lives_in
  changed: lisbon → porto"); the neighbours holding the old value stop being current.
- ``stale``: the new summary is itself the old value (a message imported late, older than the
  neighbour that states the newer value); it is stored already superseded by that neighbour.
- ``keep``: anything else, including every unclear case, which sleep reconciles later.

Order of precedence: a change (stale, then supersede) before a duplicate, so that a value
restated after a change ("Porto", "Lisbon", then "Porto" again) still retires the value between.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from hymem.facts.slots import Fact, Reading, read_fact
from hymem.facts.text import content_words, is_negated, names_and_numbers

# Cosine of MiniLM unit vectors at or above which two texts count as the same text. Measured
# with the bundled all-MiniLM-L6-v2: a filler word ("painted a sunset [together] with her
# kids") 0.99; a reworded fact ("lives in" / "moved to Porto") 0.85; another value ("Porto" /
# "Lisbon", "designer" / "manager") 0.82-0.83; an added clause ("... lovely [and bright]")
# 0.95. So 0.97 merges only texts that differ in a word that carries nothing. Texts that differ
# in one number or name score high too ("on 7 May" / "on 8 May" 0.99, "33" / "34" 0.95), and a
# negation only a little lower (0.94), so the cosine test also demands the same numbers, names
# and polarity. Punctuation-only differences can score lower (0.93 for "33." / "33!") and are
# caught by the content-word test instead.
DUP_COSINE = 0.97

DecisionKind = Literal["keep", "duplicate", "supersede", "stale"]


@dataclass(frozen=True)
class Candidate:
    """A summary as the decision sees it: its id, text, when it became true, its vector."""

    id: str
    text: str
    valid_from: datetime | None
    vector: Sequence[float] | None = None


@dataclass(frozen=True)
class Decision:
    """What to do with the new summary, and the ids it concerns (see the module docstring)."""

    kind: DecisionKind
    target_ids: tuple[str, ...] = ()
    reason: str = ""


def decide(
    new: Candidate, neighbours: Sequence[Candidate], *, dup_cosine: float = DUP_COSINE
) -> Decision:
    """The decision for `new` against `neighbours`: the same user's nearest active summaries,
    all written before `new`."""
    reading = read_fact(new.text)
    others = [(n, read_fact(n.text)) for n in neighbours if n.id != new.id]
    if reading is not None and not reading.fact.multi:
        change = _change(new, reading.fact, others)
        if change is not None:
            return change
    dups = [(n, why) for n, r in others if (why := _duplicate(new, reading, n, r, dup_cosine))]
    if dups:
        survivor, why = min(dups, key=lambda d: _order(d[0].valid_from))
        return Decision("duplicate", (survivor.id,), f"{why} {survivor.id}")
    if reading is None:
        return Decision("keep", (), "no fact read and no near-identical neighbour")
    if reading.fact.multi:
        why = f"{_slot(reading.fact)} holds several values; no neighbour repeats this one"
        return Decision("keep", (), why)
    return Decision("keep", (), f"no neighbour holds another {_slot(reading.fact)}")


def _change(
    new: Candidate, fact: Fact, others: Sequence[tuple[Candidate, Reading | None]]
) -> Decision | None:
    """Stale or supersede when neighbours hold the same fact with a clearly different value."""
    conflicts = [
        (n, r.fact)
        for n, r in others
        if r is not None
        and r.fact.slot == fact.slot
        and not r.fact.multi
        and _replaces(r.fact.value, fact.value)
    ]
    if not conflicts:
        return None
    newer = [(n, f) for n, f in conflicts if _later(n.valid_from, new.valid_from)]
    if newer:
        n, f = min(newer, key=lambda c: _order(c[0].valid_from))
        reason = f"stale: {fact.relation} is {f.value} from {n.id}, later than {fact.value}"
        return Decision("stale", (n.id,), reason)
    old_values = ", ".join(dict.fromkeys(f.value for _, f in conflicts))
    reason = f"{fact.relation} changed: {old_values} → {fact.value}"
    return Decision("supersede", tuple(n.id for n, _ in conflicts), reason)


def _replaces(old: str, new: str) -> bool:
    """Whether value `new` replaces value `old` of the same fact. A breakup with a named person
    ("ended:tom") replaces only a relationship with that person."""
    if new.startswith("ended:"):
        return old != new and old.partition(":")[2] == new.partition(":")[2]
    return _clearly_different(old, new)


def _clearly_different(old: str, new: str) -> bool:
    """Different values, neither contained in the other: "new york" and "new york city",
    "designer" and "senior designer", "married:anna" and "married:anna smith" may be one value
    written twice, so they are left for sleep."""
    a, b = set(re.findall(r"\w+", old)), set(re.findall(r"\w+", new))
    return not (a <= b or b <= a)


def _instant(when: datetime) -> float:
    """Seconds since the epoch; a naive time is taken as UTC (the store's convention)."""
    return (when if when.tzinfo is not None else when.replace(tzinfo=UTC)).timestamp()


def _later(neighbour: datetime | None, new: datetime | None) -> bool:
    """Whether a neighbour's value became true strictly after the new one's. An unknown time
    counts as the order of writing: the neighbour came first."""
    if neighbour is None or new is None:
        return False
    return _instant(neighbour) > _instant(new)


def _order(when: datetime | None) -> tuple[bool, float]:
    """Sort key: earliest first, unknown times last."""
    return (when is None, _instant(when) if when is not None else 0.0)


def _duplicate(
    new: Candidate,
    reading: Reading | None,
    old: Candidate,
    old_reading: Reading | None,
    dup_cosine: float,
) -> str:
    """Why `new` is a duplicate of `old` (a reason's opening words), or "" when it is not."""
    if reading is not None and old_reading is not None:
        if reading.fact != old_reading.fact:
            return ""  # different facts are never one memory, however alike the words
        # the same fact is one memory whatever else either text says (see the module docstring)
        return f"same fact ({_slot(reading.fact)}: {reading.fact.value}) as"
    if content_words(new.text) == content_words(old.text):
        return "same words as"
    cosine = _cosine(new.vector, old.vector)
    if cosine is None or cosine < dup_cosine:
        return ""
    if names_and_numbers(new.text) != names_and_numbers(old.text):
        return ""
    if is_negated(new.text) != is_negated(old.text):
        return ""
    return f"near-identical (cosine {cosine:.3f}) to"


def _cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    """The dot product of two unit vectors, or None when either is missing or they differ in
    length (vectors of different embedders)."""
    if a is None or b is None or len(a) != len(b) or len(a) == 0:
        return None
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


def _slot(fact: Fact) -> str:
    return f"{fact.subject}/{fact.relation}"
