"""Fixtures for the reader tests.

* `seed_memory(mem, user_id, events)`: writes linked segments + summaries straight through
  `store_of(mem).commit_segments` (no write path or model needed).
* `alice_events()` / `bob_events()`: a small conversation of our own, two users.
* `scripted_memory`: a real Memory (hashing embedder, LanceDB, Tantivy) on the scripted server.
* `make_fakes(...)` / `ReaderFakes`: what a Reader is built with, in memory (scripted roles, a
  canned searcher and embedder from tests/doubles.py, and the real `InMemoryStore` recording
  its calls), so the reader's unit tests run with no disk, network or model; `summary_hit`,
  `segment_record` and `reader_store` build their data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.types import Hit, Level, SegmentRecord, SummaryRecord, TurnRecord, TurnStatus
from hymem.read.params import AskParams, ask_params
from hymem.read.reader import Reader
from hymem.testing import embedder_of, store_of

from tests.doubles import ScriptedRoles, scripted_config
from tests.doubles_retrieval import DIM, FakeEmbedder, FakeSearcher
from tests.fixtures_store import RecordingStore

T0 = datetime(2023, 5, 8, 13, 56)


# ---- unit-test builders: a Reader over doubles ------------------------------------------------


def summary_hit(i: int, user_id: str = "alice", segment: int | None = None) -> Hit:
    seg = i if segment is None else segment
    return Hit(
        level=Level.SUMMARY,
        id=f"sum{i}",
        user_id=user_id,
        text=f"fact {i}",
        segment_id=f"seg{seg}",
        time_start=T0 + timedelta(days=i),
        time_end=T0 + timedelta(days=i),
        fused_score=1.0 / (i + 1),
    )


def segment_record(i: int, user_id: str = "alice", day: int | None = None) -> SegmentRecord:
    when = T0 + timedelta(days=i if day is None else day)
    return SegmentRecord(
        id=f"seg{i}",
        user_id=user_id,
        session_ids=["s1"],
        turn_ids=[f"t{i}a", f"t{i}b"],
        text=f"[{when:%Y-%m-%d %H:%M}] A: raw {i}",
        time_start=when,
        time_end=when,
        vector=[0.5] * DIM,
        created_at=T0,
    )


def reader_store(segments: Sequence[SegmentRecord]) -> RecordingStore:
    """The real in-memory store holding `segments`, each user's in one commit."""
    store = RecordingStore(FakeEmbedder.dim, embedder_name=FakeEmbedder.name)
    for user_id in sorted({s.user_id for s in segments}):
        store.commit_segments(user_id, [s for s in segments if s.user_id == user_id], [], [])
    return store


@dataclass
class ReaderFakes:
    """The doubles one Reader is built with; tests script and inspect them after `reader()`."""

    roles: ScriptedRoles
    searcher: FakeSearcher
    store: RecordingStore
    embedder: FakeEmbedder = field(default_factory=FakeEmbedder)
    config: MemoryConfig = field(default_factory=MemoryConfig.defaults)

    def reader(self) -> Reader:
        return Reader(self.store, self.embedder, self.searcher, lambda: self.roles, self.config)

    def params(self, question: str, **kwargs: Any) -> AskParams:
        """One ask's checked arguments, built as `Memory.ask` builds them (`ask_params`, with
        this config), for alice unless `user_id` is given."""
        return ask_params(question, config=self.config, **{"user_id": "alice", **kwargs})


def make_fakes(
    n_hits: int = 30, *, roles: ScriptedRoles | None = None, **config: Any
) -> ReaderFakes:
    """n_hits summaries sum0..sumN-1 of alice, each linked to its own segment segI."""
    return ReaderFakes(
        roles=roles or ScriptedRoles(),
        searcher=FakeSearcher([summary_hit(i) for i in range(n_hits)]),
        store=reader_store([segment_record(i) for i in range(n_hits)]),
        config=MemoryConfig.defaults(**config),
    )


# ---- integration helpers -------------------------------------------------------------------


@dataclass
class Event:
    """One Level-2 segment with its Level-1 facts, for seed_memory."""

    lines: list[tuple[str, str]]  # (speaker, text)
    facts: list[str]
    when: datetime = T0
    session_id: str = "s1"


def seed_memory(mem: Any, user_id: str, events: Sequence[Event]) -> list[SummaryRecord]:
    """Write linked segments + summaries directly (turns included) and return the summaries."""

    segs: list[SegmentRecord] = []
    sums: list[SummaryRecord] = []
    turns: list[TurnRecord] = []
    seq = store_of(mem).next_seq(user_id)
    for e_i, ev in enumerate(events):
        seg_id = f"{user_id}-seg{e_i}"
        turn_ids = []
        raw = []
        for t_i, (speaker, text) in enumerate(ev.lines):
            when = ev.when + timedelta(minutes=t_i)
            tid = f"{user_id}-t{e_i}-{t_i}"
            turn_ids.append(tid)
            raw.append(f"[{when:%Y-%m-%d %H:%M}] {speaker}: {text}")
            turns.append(
                TurnRecord(
                    id=tid,
                    user_id=user_id,
                    session_id=ev.session_id,
                    seq=seq,
                    speaker=speaker,
                    text=text,
                    timestamp=when,
                    status=TurnStatus.PENDING,
                    created_at=ev.when,
                )
            )
            seq += 1
        end = ev.when + timedelta(minutes=max(0, len(ev.lines) - 1))
        segs.append(
            SegmentRecord(
                id=seg_id,
                user_id=user_id,
                session_ids=[ev.session_id],
                turn_ids=turn_ids,
                text="\n".join(raw),
                time_start=ev.when,
                time_end=end,
                token_count=sum(len(t.split()) for _, t in ev.lines),
                created_at=ev.when,
            )
        )
        vectors = embedder_of(mem).embed(ev.facts) if ev.facts else []
        for f_i, (fact, vec) in enumerate(zip(ev.facts, vectors, strict=True)):
            sums.append(
                SummaryRecord(
                    id=f"{user_id}-sum{e_i}-{f_i}",
                    user_id=user_id,
                    segment_id=seg_id,
                    text=fact,
                    vector=[float(x) for x in vec],
                    time_start=ev.when,
                    time_end=end,
                    created_at=ev.when,
                    updated_at=ev.when,
                )
            )
    seg_vectors = embedder_of(mem).embed([s.text for s in segs]) if segs else []
    segs = [
        s.model_copy(update={"vector": [float(x) for x in v]})
        for s, v in zip(segs, seg_vectors, strict=True)
    ]
    store_of(mem).append_turns(turns)
    store_of(mem).commit_segments(user_id, segs, sums, [t.id for t in turns])
    return sums


# ---- a small conversation of our own ---------------------------------------------------------

D = datetime


def alice_events() -> list[Event]:
    """Twelve events with three facts each (36 summaries): one fact per event is distinctive,
    the other two are filler, so coarse top-30 spans several selection batches."""
    topics = [
        (
            "Caroline",
            "I went to the LGBTQ support group yesterday, it was so powerful.",
            "Caroline went to an LGBTQ support group on 7 May 2023.",
        ),
        (
            "Melanie",
            "I painted a sunrise over the lake last year.",
            "Melanie painted a sunrise over a lake in 2022.",
        ),
        (
            "Caroline",
            "I am researching adoption agencies because I want to be a mom.",
            "Caroline is researching adoption agencies.",
        ),
        (
            "Melanie",
            "We went camping in the mountains with the kids last weekend.",
            "Melanie went camping in the mountains with her kids.",
        ),
        (
            "Caroline",
            "My grandmother gave me a necklace from Sweden.",
            "Caroline owns a necklace from her grandmother in Sweden.",
        ),
        (
            "Melanie",
            "I signed up for a pottery class, my first bowl is drying.",
            "Melanie took a pottery class and made a bowl.",
        ),
        (
            "Caroline",
            "I ran a charity race for mental health on Saturday.",
            "Caroline ran a charity race for mental health.",
        ),
        (
            "Melanie",
            "My daughter started playing the violin this spring.",
            "Melanie's daughter started playing the violin.",
        ),
        (
            "Caroline",
            "I moved to a new apartment downtown near the river.",
            "Caroline moved to an apartment downtown near the river.",
        ),
        (
            "Melanie",
            "We adopted a golden retriever puppy named Oscar.",
            "Melanie adopted a golden retriever puppy named Oscar.",
        ),
        (
            "Caroline",
            "I gave a talk at the school about transgender youth.",
            "Caroline gave a school talk about transgender youth.",
        ),
        (
            "Melanie",
            "I read a book about Becoming Nicole and loved it.",
            "Melanie read the book Becoming Nicole.",
        ),
    ]
    events = []
    for i, (speaker, line, fact) in enumerate(topics):
        events.append(
            Event(
                lines=[(speaker, line), ("Friend", "Wow, tell me more!")],
                facts=[
                    fact,
                    f"{speaker} chatted with a friend (note {i}).",
                    f"The friends talked in the evening (note {i}).",
                ],
                when=D(2023, 5, 8, 13, 56) + timedelta(days=3 * i),
            )
        )
    return events


def bob_events() -> list[Event]:
    return [
        Event(
            lines=[("Bob", "My bank PIN is 4421 and I keep it under the mattress.")],
            facts=["Bob keeps his bank PIN secret 4421 under the mattress."],
            when=D(2023, 6, 1, 9, 0),
        )
    ]


# ---- integration fixtures ----------------------------------------------------------------------

CANDIDATE_LINE = re.compile(r"^- \[([^\]]+)\] \([^)]*\) (.*)$", re.MULTILINE)
PASSAGE_ID = re.compile(r'<passage id="([^"]+)"')


def request_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))


def shown_candidates(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, text) of every memory line a request showed the model."""
    return CANDIDATE_LINE.findall(request_text(body))


def pick_where(*words: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A select reply choosing the shown candidates whose text contains any of `words`."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        ids = [cid for cid, text in shown_candidates(body) if any(w in text for w in words)]
        return {"ids": ids}

    return reply


def pick_first(body: dict[str, Any]) -> dict[str, Any]:
    """A select reply choosing the first candidate shown (always a valid, non-empty choice)."""
    return {"ids": [shown_candidates(body)[0][0]]}


@pytest.fixture
def scripted_memory(llm_server: Any, tmp_path: Any) -> Iterator[Any]:
    """A Memory (hashing embedder, real LanceDB + Tantivy) talking to the scripted server,
    holding alice's twelve events and bob's secret."""
    from hymem.api.memory import Memory
    from hymem.embed.embedders import HashingEmbedder

    mem = Memory(tmp_path / "mem", config=scripted_config(llm_server), embedder=HashingEmbedder())
    seed_memory(mem, "alice", alice_events())
    seed_memory(mem, "bob", bob_events())
    try:
        yield mem
    finally:
        mem.close()
