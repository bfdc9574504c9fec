"""The audit: how far a user's memory can be trusted, measured from the store alone.

Per user it reports how well each active summary is supported by the turns it cites, which
active summaries say the same thing twice, which state two values of one single-valued fact,
which are still served although a newer value ended them, and which records lost their links.
No model runs: every check is a pure function of records, and `audit_store` only reads.

Support (`support_score`) is the share of a summary's claim terms found in its source turns:

* Claim terms are its names (capitalised words that do not open a sentence, kept even when they
  look like function words: "May", "Will"), its numbers, and its content words (lowercased, stop
  words and framing verbs such as "mentioned" or "said" left out: they claim nothing).
* Both sides are normalised alike: number words become digits ("two" -> "2"), a possessive 's
  is dropped, and one inflection is stripped with the extractive backend's light stemmer
  (cats/cat, moved/move, painting/paint, went/go).
* Source turns come as "Speaker: text" lines and the speaker counts as part of the source: the
  write path rewrites "I moved" to "User moved" or "Caroline moved", so a summary naming the
  turns' speaker ("User", "Caroline's") is supported, while "User" over Caroline's turns is not.
* Dates the summariser resolved from the turns' timestamps ("the week of 19 February 2024",
  "on 7 May 2023", "Friday", "(in 2019)") are not in the turns' text: month names, weekdays,
  years and day numbers inside such a date phrase count as supported. Other words of the phrase
  ("week") must still be found.
* A summary with no claim terms scores 1.0: it asserts nothing that could be invented.
"""

from __future__ import annotations

import heapq
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hymem.core.types import SegmentRecord, SummaryRecord, SummaryStatus
from hymem.facts import read_fact
from hymem.facts.text import digits, is_negated
from hymem.indexes import paging as P
from hymem.llm.extractive.text import STOPWORDS, stem, wordset
from hymem.manage.ports import AuditStore
from pydantic import BaseModel, Field, computed_field

# A summary below this support has most of its claim terms missing from its sources: more
# invented than restated.
UNSUPPORTED_BELOW = 0.5
WORST_LISTED = 10
# Summaries read per scan batch: their source turns and segments are read per batch too, so
# this bounds what an audit holds besides the active summaries themselves.
AUDIT_BATCH = 1_000
# Ids per get_turns/get_segments call: the folder store puts them into one SQL IN list.
READ_CHUNK = 500

# Reporting verbs a summariser frames a fact with ("Caroline mentioned that ..."), any form.
_FRAMING = frozenset(
    stem(w)
    for w in wordset(
        "mention say said tell told share talk discuss express note state explain describe"
    )
)
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_MONTH = "(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?"
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
# Capitalised months only: "may" and "march" are verbs. A month counts with a day or a year
# beside it ("7 May 2023", "May 7", "April 2023"), so a person called May is no date.
_DATE = re.compile(
    rf"\b(?:{_ORD} (?:of )?{_MONTH}(?:,? {_YEAR})?"
    rf"|{_MONTH} {_ORD}\b(?:,? {_YEAR})?"
    rf"|{_MONTH},? {_YEAR}"
    rf"|{_WEEKDAY}"
    rf"|(?:in|since|by|during|until|before|after|of|from) {_YEAR})\b"
)


# --- support: pure -------------------------------------------------------------------------


def _normal(token: str) -> str:
    """The form both sides are compared in: lowercase, no possessive, one inflection off."""
    low = token.lower()
    if low.endswith("'s"):
        low = low[:-2]
    return stem(low) if low else low


def _prepared(text: str) -> str:
    """`text` with straight apostrophes and its number words as digits."""
    return digits(text.replace("’", "'"))


_BEFORE_WORD = frozenset(" \t\"'“‘(")


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence (or follows a "Speaker:" prefix)."""
    i = start - 1
    while i >= 0 and text[i] in _BEFORE_WORD:
        i -= 1
    return i < 0 or text[i] in ".!?\n:"


def claim_terms(summary_text: str) -> dict[str, bool]:
    """The summary's claim terms (normalised), each with whether it sits in a date phrase."""
    text = _prepared(summary_text)
    spans = [m.span() for m in _DATE.finditer(text)]
    terms: dict[str, bool] = {}
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        pronoun = word == "I" or word.startswith("I'")
        is_name = word[:1].isupper() and not pronoun and not _opens_sentence(text, m.start())
        is_number = any(c.isdigit() for c in word)
        if not (is_name or is_number) and word.lower() in STOPWORDS:
            continue
        term = _normal(word)
        if not term or (term in _FRAMING and not is_name):
            continue
        in_date = any(a <= m.start() and m.end() <= b for a, b in spans)
        terms[term] = terms.get(term, False) or in_date
    return terms


def source_terms(source_texts: Sequence[str]) -> frozenset[str]:
    """Every normalised word of the source lines, their "Speaker:" prefixes included."""
    return frozenset(
        _normal(word) for text in source_texts for word in _TOKEN.findall(_prepared(text))
    )


def support_score(summary_text: str, source_texts: Sequence[str]) -> float:
    """The share in [0, 1] of the summary's claim terms that its sources support (see the
    module docstring for the rules); 1.0 when it has none."""
    terms = claim_terms(summary_text)
    if not terms:
        return 1.0
    held = source_terms(source_texts)
    supported = sum(1 for term, in_date in terms.items() if in_date or term in held)
    return supported / len(terms)


# --- duplicates, contradictions, stale versions: pure ---------------------------------------


def _same_keys(text: str) -> list[object]:
    """What two duplicates share: their claim terms and polarity ("eats meat" and "does not
    eat meat" share their words but are no duplicates), or their fact and its extra detail."""
    keys: list[object] = []
    terms = frozenset(claim_terms(text))
    if terms:
        keys.append(("words", terms, is_negated(text)))
    reading = read_fact(text)
    if reading is not None:
        f = reading.fact
        keys.append(("fact", f.subject, f.relation, f.value, reading.detail))
    return keys


def duplicate_clusters(summaries: Iterable[SummaryRecord]) -> list[list[str]]:
    """Groups (size >= 2, ids sorted) of active summaries that say the same thing: the same
    fact (subject, relation, value) with nothing else said beside it, or the same claim terms.

    A fact with different extra detail is left out on purpose: write-time consolidation keeps
    a newer summary that adds detail to a fact active beside the older one."""
    parent: dict[str, str] = {}

    def root(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of: dict[object, str] = {}
    for rec in summaries:
        if rec.status is not SummaryStatus.ACTIVE:
            continue
        parent.setdefault(rec.id, rec.id)
        for key in _same_keys(rec.text):
            held = first_of.setdefault(key, rec.id)
            parent[root(rec.id)] = root(held)
    groups: dict[str, list[str]] = defaultdict(list)
    for i in parent:
        groups[root(i)].append(i)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def contradictions(summaries: Iterable[SummaryRecord]) -> list[list[str]]:
    """Groups (ids sorted) of active summaries sharing a `fact_key` whose texts read as
    different values of that single-valued fact: only one of them can be true now."""
    by_key: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rec in summaries:
        if rec.status is not SummaryStatus.ACTIVE or rec.fact_key is None:
            continue
        reading = read_fact(rec.text)
        if reading is not None and not reading.fact.multi:
            by_key[rec.fact_key].append((rec.id, reading.fact.value))
    return sorted(
        sorted(i for i, _ in pairs)
        for pairs in by_key.values()
        if len({value for _, value in pairs}) > 1
    )


def stale_served(summaries: Iterable[SummaryRecord]) -> list[str]:
    """Ids (sorted) of active summaries already ended (`valid_to`) or pointing at a newer
    version (`superseded_by`): what a crash or a half-applied change can leave served."""
    return sorted(
        r.id
        for r in summaries
        if r.status is SummaryStatus.ACTIVE
        and (r.valid_to is not None or r.superseded_by is not None)
    )


# --- the report ----------------------------------------------------------------------------


class SummarySupport(BaseModel):
    """One active summary's support by its source turns."""

    id: str
    memory_id: str
    text: str
    score: float


class UserAudit(BaseModel):
    """One user's audit. `summaries` counts active ones; support is measured over those."""

    user_id: str
    summaries: int = 0
    mean_support: float = 1.0
    unsupported: int = 0  # active summaries scoring below UNSUPPORTED_BELOW
    worst: list[SummarySupport] = Field(default_factory=list)  # lowest first, WORST_LISTED
    duplicate_clusters: list[list[str]] = Field(default_factory=list)
    contradictions: list[list[str]] = Field(default_factory=list)
    stale_served: list[str] = Field(default_factory=list)
    unlinked_summaries: list[str] = Field(default_factory=list)  # any status
    unlinked_segments: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form
    @property
    def healthy(self) -> bool:
        """Nothing served wrongly and no link lost: no contradictions (two current values of
        one single-valued fact), no ended fact still served, no record without its links.
        Duplicates and low support are reported, not judged: a fresh ingest often says one
        thing twice (sleep merges it), and an abstractive summary may paraphrase well and
        still score low."""
        return not (
            self.contradictions
            or self.stale_served
            or self.unlinked_summaries
            or self.unlinked_segments
        )


class AuditReport(BaseModel):
    """`Memory.audit()`: one `UserAudit` per user audited, in user order."""

    users: list[UserAudit] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form
    @property
    def healthy(self) -> bool:
        return all(u.healthy for u in self.users)


# --- reading the store ---------------------------------------------------------------------


def _chunks(ids: Iterable[str]) -> Iterable[list[str]]:
    unique = list(dict.fromkeys(ids))
    for i in range(0, len(unique), READ_CHUNK):
        yield unique[i : i + READ_CHUNK]


def _turn_lines(store: AuditStore, user_id: str, ids: Iterable[str]) -> dict[str, str]:
    """The held turns among `ids`, as "Speaker: text" lines by id."""
    lines: dict[str, str] = {}
    for chunk in _chunks(ids):
        lines |= {t.id: f"{t.speaker}: {t.text}" for t in store.get_turns(user_id, ids=chunk)}
    return lines


@dataclass(frozen=True)
class _Links:
    """What one batch of summaries links to: the held segments' turn ids and the held turns."""

    segments: dict[str, list[str]]
    turns: dict[str, str]

    def linked(self, rec: SummaryRecord) -> bool:
        return rec.segment_id in self.segments and all(t in self.turns for t in rec.source_turn_ids)

    def sources(self, rec: SummaryRecord) -> list[str]:
        """Its source turns' lines; a hand-made summary citing none stands for its segment."""
        ids = rec.source_turn_ids or self.segments.get(rec.segment_id, [])
        return [self.turns[t] for t in ids if t in self.turns]


def _read_links(store: AuditStore, user_id: str, batch: Sequence[SummaryRecord]) -> _Links:
    segments: dict[str, list[str]] = {}
    for chunk in _chunks(r.segment_id for r in batch):
        segments |= {s.id: s.turn_ids for s in store.get_segments(user_id, chunk)}
    wanted = [t for r in batch for t in (r.source_turn_ids or segments.get(r.segment_id, []))]
    return _Links(segments, _turn_lines(store, user_id, wanted))


def _unlinked_segments(store: AuditStore, user_id: str) -> list[str]:
    """Ids (sorted) of the user's segments listing a turn the store does not hold."""
    missing: list[str] = []
    after: P.PageKey | None = None
    while True:
        page = store.page(user_id, "segment", after=after, limit=P.MAX_PAGE)
        segments = [s for s in page if isinstance(s, SegmentRecord)]
        held = _turn_lines(store, user_id, (t for s in segments for t in s.turn_ids))
        missing += [s.id for s in segments if any(t not in held for t in s.turn_ids)]
        if len(page) < P.MAX_PAGE:
            return sorted(missing)
        after = P.key_of("segment", page[-1].model_dump())


def audit_user(store: AuditStore, user_id: str, *, batch_size: int = AUDIT_BATCH) -> UserAudit:
    """One user's audit. Every summary version is read in batches (for its links); only the
    active ones are kept, without vectors, for the duplicate and contradiction checks."""
    active: list[SummaryRecord] = []
    scored: list[tuple[float, str, SummaryRecord]] = []
    unlinked: list[str] = []
    batches = store.iter_summaries(
        user_id, statuses=None, with_vectors=False, batch_size=batch_size
    )
    for batch in batches:
        links = _read_links(store, user_id, batch)
        unlinked += [r.id for r in batch if not links.linked(r)]
        for rec in batch:
            if rec.status is SummaryStatus.ACTIVE:
                active.append(rec)
                scored.append((support_score(rec.text, links.sources(rec)), rec.id, rec))
    scores = [s for s, _, _ in scored]
    worst = heapq.nsmallest(WORST_LISTED, scored, key=lambda x: (x[0], x[1]))
    return UserAudit(
        user_id=user_id,
        summaries=len(active),
        mean_support=sum(scores) / len(scores) if scores else 1.0,
        unsupported=sum(1 for s in scores if s < UNSUPPORTED_BELOW),
        worst=[
            SummarySupport(id=r.id, memory_id=r.memory_id, text=r.text, score=s)
            for s, _, r in worst
        ],
        duplicate_clusters=duplicate_clusters(active),
        contradictions=contradictions(active),
        stale_served=stale_served(active),
        unlinked_summaries=sorted(unlinked),
        unlinked_segments=_unlinked_segments(store, user_id),
    )


def audit_store(store: AuditStore, user_id: str | None = None) -> AuditReport:
    """The audit of one user, or of every user the store holds (`Records.users()`)."""
    users = [user_id] if user_id is not None else store.users()
    return AuditReport(users=[audit_user(store, u) for u in users])


__all__ = [
    "AUDIT_BATCH",
    "UNSUPPORTED_BELOW",
    "WORST_LISTED",
    "AuditReport",
    "SummarySupport",
    "UserAudit",
    "audit_store",
    "audit_user",
    "claim_terms",
    "contradictions",
    "duplicate_clusters",
    "source_terms",
    "stale_served",
    "support_score",
]
