"""What a Reader is built with, in memory: scripted roles, a canned searcher and embedder, and
the real `InMemoryStore` (recording its calls), so the reader's unit tests run with no disk,
network or model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from hymem.config import MemoryConfig
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    LightAnswerOutput,
    ReflectOutput,
    Role,
    RoleResult,
    SelectOutput,
)
from hymem.read.reader import Reader
from hymem.types import Hit, Level, RoleUsage, SegmentRecord

from tests.fixtures_store import RecordingStore

USAGE = RoleUsage(calls=1, prompt_tokens=10, completion_tokens=2)
T0 = datetime(2023, 5, 8, 13, 56)
DIM = 4  # FakeEmbedder's dimension, so the store takes the segments' vectors


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


class FakeEmbedder:
    name, dim = "fake-4", DIM

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.ones((len(texts), self.dim), dtype=np.float32) / 2.0


class FakeSearcher:
    """Returns the first k of `hits` at the level asked (all of one user unless a test plants
    others)."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.queries: list[tuple[str, int]] = []
        self.levels: list[Level] = []
        self.time_ranges: list[Any] = []

    def search_vector(
        self, vector: Any, query: str, *, user_id: str, k: int, level: Level, **_: Any
    ) -> list[Hit]:
        assert vector is not None
        self.queries.append((query, k))
        self.levels.append(level)
        self.time_ranges.append(_.get("time_range"))
        return [h for h in self.hits if h.level == level][:k]


def reader_store(segments: Sequence[SegmentRecord]) -> RecordingStore:
    """The real in-memory store holding `segments`, each user's in one commit."""
    store = RecordingStore(FakeEmbedder.dim, embedder_name=FakeEmbedder.name)
    for user_id in sorted({s.user_id for s in segments}):
        store.commit_segments(user_id, [s for s in segments if s.user_id == user_id], [], [])
    return store


Reply = Callable[..., Any]


class FakeRoles:
    """Scripted roles: each role answers from a callable (or a queue of values); every call is
    recorded with its start/end time so tests can check concurrency."""

    label = "fake"

    def __init__(
        self,
        *,
        light: Reply | list[Any] | None = None,
        select: Reply | None = None,
        deep: Reply | None = None,
        reflect: Reply | list[Any] | None = None,
        select_delay_s: float = 0.0,
    ) -> None:
        self._light = light if light is not None else (lambda q, c, p: ("light", True))
        self._select = select or (lambda q, c: [x.id for x in c])
        self._deep = deep or (lambda q, passages, pool: "deep:" + ",".join(x.id for x in passages))
        self._reflect = reflect if reflect is not None else (lambda q, a: (True, None))
        self.select_delay_s = select_delay_s
        self.calls: list[tuple[str, tuple[Any, ...], float, float]] = []
        self.asked_on: list[Any] = []  # `now` of every answering call
        self._lock = threading.Lock()

    def _reply(self, source: Reply | list[Any], *args: Any) -> Any:
        if isinstance(source, list):
            return source.pop(0)
        return source(*args)

    def _result(self, role: Role, output: Any, args: tuple[Any, ...], start: float) -> Any:
        fallback = isinstance(output, Fallback)
        if fallback:
            output = output.output
        with self._lock:
            self.calls.append((role.value, args, start, time.perf_counter()))
        return RoleResult(
            role=role,
            output=output,
            usage=USAGE,
            fallback=fallback,
            fallback_reason="malformed reply" if fallback else None,
            prompt_version=f"{role.value}@1",
        )

    def light_answer(
        self, question: str, context: list[ContextItem], pool: list[str], *, now: Any = None
    ) -> Any:
        self.asked_on.append(now)
        start = time.perf_counter()
        reply = self._reply(self._light, question, context, pool)
        if isinstance(reply, Fallback):
            return self._result(Role.LIGHT_ANSWER, reply, (question, context, pool), start)
        answer, complete = reply
        out = LightAnswerOutput(answer=answer, complete=complete)
        return self._result(Role.LIGHT_ANSWER, out, (question, context, pool), start)

    def select_events(self, question: str, candidates: list[ContextItem]) -> Any:
        start = time.perf_counter()
        time.sleep(self.select_delay_s)
        out = SelectOutput(ids=self._select(question, candidates))
        return self._result(Role.SELECT, out, (question, candidates), start)

    def deep_answer(
        self, question: str, passages: list[ContextItem], pool: list[str], *, now: Any = None
    ) -> Any:
        self.asked_on.append(now)
        start = time.perf_counter()
        out = DeepAnswerOutput(answer=self._deep(question, passages, pool))
        return self._result(Role.DEEP_ANSWER, out, (question, passages, pool), start)

    def reflect(self, question: str, answer: str) -> Any:
        start = time.perf_counter()
        complete, new_question = self._reply(self._reflect, question, answer)
        out = ReflectOutput(complete=complete, new_question=new_question)
        return self._result(Role.REFLECT, out, (question, answer), start)

    def called(self, role: str) -> list[tuple[Any, ...]]:
        return [args for name, args, _, _ in self.calls if name == role]

    def close(self) -> None:
        pass


@dataclass
class Fallback:
    """A scripted reply that stands for the role's fallback (as after a malformed reply)."""

    output: Any


@dataclass
class ReaderFakes:
    """The fakes one Reader is built with; tests script and inspect them after `reader()`."""

    roles: FakeRoles
    searcher: FakeSearcher
    store: RecordingStore
    embedder: FakeEmbedder = field(default_factory=FakeEmbedder)
    config: MemoryConfig = field(default_factory=MemoryConfig.defaults)

    def reader(self) -> Reader:
        return Reader(self.store, self.embedder, self.searcher, lambda: self.roles, self.config)


def make_fakes(n_hits: int = 30, *, roles: FakeRoles | None = None, **config: Any) -> ReaderFakes:
    """n_hits summaries sum0..sumN-1 of alice, each linked to its own segment segI."""
    return ReaderFakes(
        roles=roles or FakeRoles(),
        searcher=FakeSearcher([summary_hit(i) for i in range(n_hits)]),
        store=reader_store([segment_record(i) for i in range(n_hits)]),
        config=MemoryConfig.defaults(**config),
    )
