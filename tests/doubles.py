"""The test doubles, in one place.

* `ScriptedRoles`: an in-process `Roles` (the protocol in hymem.llm.roles) whose every role
  answers from a script: a queue of replies per role, then the role's default (a callable of
  the role's arguments). It records each call (role, arguments, start/end time, the error it
  raised) and sums usage per role, thread-safely, so reader, write-path and sleep tests script
  it alike and check what was asked, in what order and how concurrently.
* `Fallback(output)`: a scripted reply that stands for the role's fallback (as after a
  malformed model reply); an exception instance as a reply is raised by the call.
* `FakeEmbedder`, `FakeSearcher`: a constant 4-dimensional embedder and a canned searcher,
  both recording their calls, for the reader's unit tests.
* `WordTokens`: a TokenEmbedder twin (one hashing vector per word, mean-pooled).
* `ScheduleScript` with `drive`, `light`, `reflect`: the scheduler (hymem.read.scheduler)
  driven by scripted outcomes, recording the steps it asked for.
* `scripted_config(server, **overrides)`: the one config whose roles talk to the scripted
  OpenAI-compatible server (tests/llm_server.py): no retries, no repair, a 10 s timeout.
* `summarise_reply(body)`: a scripted server's summarise reply, one fact per segment shown.

    roles = ScriptedRoles(light=lambda q, context, pool: ("?", False))
    roles.queue("select", ["sum1"], LLMUnavailable("down", role="select"))
    ... run the code under test with `lambda: roles` ...
    roles.called("select")   -> [(question, candidates), ...]
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from hymem.config import MemoryConfig
from hymem.embedders import HashingEmbedder, TokenVectors
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    Role,
    RoleResult,
    SegmentInput,
    SegmentSummary,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
)
from hymem.read.budget import Budget
from hymem.read.scheduler import (
    Cost,
    DeepAnswerOutcome,
    DeepAnswerStep,
    DeepRetrieveStep,
    LightOutcome,
    LightStep,
    Outcome,
    ReadPlan,
    ReflectOutcome,
    ReflectStep,
    RetrieveOutcome,
    ScheduleResult,
    SelectOutcome,
    SelectStep,
    Step,
    schedule,
)
from hymem.search.hybrid import Ranked
from hymem.search.scope import SearchScope
from hymem.types import Hit, Level, RoleUsage, SummaryStatus

# What each reading role costs per call (the reader's usage tests count on 12 tokens a call).
USAGE = RoleUsage(calls=1, prompt_tokens=10, completion_tokens=2)
DIM = 4  # FakeEmbedder's dimension

Reply = Callable[..., Any]
"""A role's default: called with the role's positional arguments, returns a reply."""


@dataclass(frozen=True)
class Fallback:
    """A scripted reply that stands for the role's fallback (as after a malformed reply)."""

    output: Any


@dataclass(frozen=True)
class Call:
    """One call a `ScriptedRoles` answered (or raised from)."""

    role: str
    args: tuple[Any, ...]
    start: float  # time.perf_counter() on entry
    end: float
    error: BaseException | None = None


def _one_fact_per_line(segments: list[SegmentInput]) -> SummariseOutput:
    return SummariseOutput(
        segments=[
            SegmentSummary(segment_id=s.segment_id, facts=[ln.split("] ", 1)[-1] for ln in s.lines])
            for s in segments
        ]
    )


def _ignore(target: ContextItem, newer: list[ContextItem]) -> dict[str, Any]:
    return {"action": "ignore"}


def _exact_judge(question: str, gold: str, generated: str) -> JudgeOutput:
    return JudgeOutput(label="CORRECT" if gold.lower() in generated.lower() else "WRONG")


def _summarise_usage(args: tuple[Any, ...]) -> RoleUsage:
    tokens = sum(len(ln.split()) for s in args[0] for ln in s.lines)
    return RoleUsage(calls=1, prompt_tokens=tokens, completion_tokens=tokens)


def _update_usage(args: tuple[Any, ...]) -> RoleUsage:
    return RoleUsage(calls=1, prompt_tokens=10 * (1 + len(args[1])), completion_tokens=5)


_USAGE: dict[Role, Callable[[tuple[Any, ...]], RoleUsage]] = {
    Role.SUMMARISE: _summarise_usage,
    Role.UPDATE: _update_usage,
}


class ScriptedRoles:
    """Every role of the `Roles` protocol, answered from a script.

    Each role's keyword takes a callable (the role's default, called with the role's positional
    arguments) or a list of replies (queued; once they run out the built-in default answers).
    `queue(role, *replies)` adds replies later. A reply is what the role returns, in the
    shortest form: light `(answer, complete)`, select `[ids]`, deep `"text"`, reflect
    `(complete, new_question)`, update `{"action": ...}`, summarise a `SummariseOutput`, judge a
    `JudgeOutput`; or the output model itself; or `Fallback(output)`; or an exception, raised.

    Defaults: light says ("light", complete); select keeps every candidate; deep answers
    "deep:<passage ids>"; reflect stops; summarise makes one fact per segment line; update
    ignores; judge says CORRECT when the gold text occurs in the answer.

    `latency_s` (one number, or one per role name) sleeps in each call like a remote model.
    """

    def __init__(
        self,
        *,
        light: Reply | list[Any] | None = None,
        select: Reply | list[Any] | None = None,
        deep: Reply | list[Any] | None = None,
        reflect: Reply | list[Any] | None = None,
        summarise: Reply | list[Any] | None = None,
        update: Reply | list[Any] | None = None,
        judge: Reply | list[Any] | None = None,
        latency_s: float | Mapping[str, float] = 0.0,
        label: str = "scripted",
    ) -> None:
        self.label = label
        self.latency_s = latency_s
        self.calls: list[Call] = []
        self.asked_on: list[datetime | None] = []  # `now` of every answering call
        self._lock = threading.Lock()
        self._usage: dict[str, RoleUsage] = {}
        self._queues: dict[Role, deque[Any]] = {role: deque() for role in Role}
        self._defaults: dict[Role, Reply] = {
            Role.LIGHT_ANSWER: lambda q, c, p: ("light", True),
            Role.SELECT: lambda q, c: [x.id for x in c],
            Role.DEEP_ANSWER: lambda q, passages, p: "deep:" + ",".join(x.id for x in passages),
            Role.REFLECT: lambda q, a: (True, None),
            Role.SUMMARISE: _one_fact_per_line,
            Role.UPDATE: _ignore,
            Role.JUDGE: _exact_judge,
        }
        scripts = {
            Role.LIGHT_ANSWER: light,
            Role.SELECT: select,
            Role.DEEP_ANSWER: deep,
            Role.REFLECT: reflect,
            Role.SUMMARISE: summarise,
            Role.UPDATE: update,
            Role.JUDGE: judge,
        }
        for role, script in scripts.items():
            if isinstance(script, list):
                self._queues[role].extend(script)
            elif script is not None:
                self._defaults[role] = script

    # ---- scripting and inspection -------------------------------------------------------

    def queue(self, role: str, *replies: Any) -> None:
        """Queue replies for `role` (a `Role` value), answered before its default, in order."""
        with self._lock:
            self._queues[Role(role)].extend(replies)

    def called(self, role: str) -> list[tuple[Any, ...]]:
        """The positional arguments of every call to `role`, in call order."""
        return [c.args for c in self.calls if c.role == role]

    def summarised(self) -> list[list[SegmentInput]]:
        """The buffers `summarise` was asked about, one list of segments per call."""
        return [args[0] for args in self.called(Role.SUMMARISE)]

    def updates(self) -> list[tuple[str, list[str]]]:
        """(target id, newer ids) of every `update` call."""
        return [(t.id, [n.id for n in newer]) for t, newer in self.called(Role.UPDATE)]

    # ---- the Roles protocol ---------------------------------------------------------------

    def summarise(self, segments: list[SegmentInput]) -> RoleResult[SummariseOutput]:
        return self._answer(Role.SUMMARISE, (segments,), SummariseOutput, self._as_summary)

    def light_answer(
        self,
        question: str,
        context: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[LightAnswerOutput]:
        self.asked_on.append(now)
        return self._answer(
            Role.LIGHT_ANSWER,
            (question, context, pool),
            LightAnswerOutput,
            lambda r: LightAnswerOutput(answer=r[0], complete=r[1]),
        )

    def select_events(
        self, question: str, candidates: list[ContextItem]
    ) -> RoleResult[SelectOutput]:
        return self._answer(
            Role.SELECT, (question, candidates), SelectOutput, lambda r: SelectOutput(ids=r)
        )

    def deep_answer(
        self,
        question: str,
        passages: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[DeepAnswerOutput]:
        self.asked_on.append(now)
        return self._answer(
            Role.DEEP_ANSWER,
            (question, passages, pool),
            DeepAnswerOutput,
            lambda r: DeepAnswerOutput(answer=r),
        )

    def reflect(self, question: str, answer: str) -> RoleResult[ReflectOutput]:
        return self._answer(
            Role.REFLECT,
            (question, answer),
            ReflectOutput,
            lambda r: ReflectOutput(complete=r[0], new_question=r[1]),
        )

    def update(self, target: ContextItem, newer: list[ContextItem]) -> RoleResult[UpdateOutput]:
        return self._answer(Role.UPDATE, (target, newer), UpdateOutput, lambda r: UpdateOutput(**r))

    def judge(
        self, question: str, gold: str, generated: str, *, prompt: str = "judge"
    ) -> RoleResult[JudgeOutput]:
        return self._answer(
            Role.JUDGE, (question, gold, generated), JudgeOutput, lambda r: JudgeOutput(label=r)
        )

    def cumulative_usage(self) -> dict[str, RoleUsage]:
        with self._lock:
            return dict(self._usage)

    def close(self) -> None:
        return None

    # ---- machinery --------------------------------------------------------------------------

    @staticmethod
    def _as_summary(reply: Any) -> SummariseOutput:
        return SummariseOutput(segments=list(reply))

    def _next_reply(self, role: Role, args: tuple[Any, ...]) -> Any:
        with self._lock:
            queued = self._queues[role]
            if queued:
                return queued.popleft()
        return self._defaults[role](*args)

    def _delay(self, role: Role) -> float:
        if isinstance(self.latency_s, Mapping):
            return float(self.latency_s.get(role.value, 0.0))
        return float(self.latency_s)

    def _answer(
        self,
        role: Role,
        args: tuple[Any, ...],
        model: type[Any],
        build: Callable[[Any], Any],
    ) -> RoleResult[Any]:
        start = time.perf_counter()
        error: BaseException | None = None
        try:
            if delay := self._delay(role):
                time.sleep(delay)
            reply = self._next_reply(role, args)
            if isinstance(reply, BaseException):
                raise reply
            fallback = isinstance(reply, Fallback)
            output = reply.output if isinstance(reply, Fallback) else reply
            if not isinstance(output, model):
                output = build(output)
        except BaseException as exc:
            error = exc
            raise
        finally:
            with self._lock:
                self.calls.append(Call(role.value, args, start, time.perf_counter(), error))
        usage = _USAGE.get(role, lambda a: USAGE)(args)
        with self._lock:
            self._usage[role.value] = self._usage.get(role.value, RoleUsage()) + usage
        return RoleResult(
            role=role,
            output=output,
            usage=usage,
            fallback=fallback,
            fallback_reason="malformed reply" if fallback else None,
            prompt_version=f"{role.value}@1",
        )


class FakeEmbedder:
    """A constant embedder of dimension 4; records every batch it embedded."""

    name, dim = "fake-4", DIM

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.ones((len(texts), self.dim), dtype=np.float32) / 2.0


class FakeSearcher:
    """Returns the first k of `hits` at the level asked (all of one user unless a test plants
    others); records each query, level and time range."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.queries: list[tuple[str, int]] = []
        self.levels: list[Level] = []
        self.time_ranges: list[Any] = []

    def find(self, query: str, scope: SearchScope, vector: Any = None) -> list[Hit]:
        assert vector is not None
        self.queries.append((query, scope.k))
        self.levels.append(scope.level)
        self.time_ranges.append(scope.time_range)
        return [h for h in self.hits if h.level == scope.level][: scope.k]

    def rank(
        self,
        query: str,
        scope: SearchScope,
        vector: Any,
        *,
        also: Sequence[Any] = (),
        also_k: int = 0,
    ) -> Ranked:
        """`find`'s first hits as a ranking of ids (every branch agreeing), the same list for
        each further vector."""
        found = self.find(query, scope, vector)
        pairs = [(h.id, 1.0 / n) for n, h in enumerate(found, start=1)]
        return Ranked(
            level=scope.level,
            fused=pairs,
            dense={i: (n, s) for n, (i, s) in enumerate(pairs, start=1)},
            lexical={},
            also=[pairs[:also_k] for _ in also],
            degraded=False,
        )

    def rows(self, scope: SearchScope, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The hits of `ids` as the store's hit rows."""
        wanted = set(ids)
        return {
            h.id: {
                "id": h.id,
                "user_id": h.user_id,
                "text": h.text,
                "segment_id": h.segment_id,
                "source_turn_ids": list(h.turn_ids),
                "turn_ids": list(h.turn_ids),
                "attribution": h.attribution,
                "time_start": h.time_start,
                "time_end": h.time_end,
                "status": (h.status or SummaryStatus.ACTIVE).value,
                "metadata": dict(h.metadata),
                "memory_id": h.memory_id,
                "valid_from": h.valid_from,
                "valid_to": h.valid_to,
            }
            for h in self.hits
            if h.level == scope.level and h.id in wanted and h.user_id == scope.user_id
        }


class WordTokens(HashingEmbedder):
    """A TokenEmbedder twin: one 'token' per word, each the hashing vector of that word, and
    a sentence vector that is their normalised mean (as MiniLM's mean pooling is)."""

    def __init__(self) -> None:
        super().__init__(64)
        self.calls: list[list[str]] = []

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        self.calls.append(list(texts))
        out, toks = [], []
        for text in texts:
            spans = [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]
            vecs = super().embed([text[s:e] for s, e in spans]) if spans else np.zeros((0, 64))
            toks.append(TokenVectors(vecs.astype(np.float16), np.asarray(spans, np.int32)))
            mean = vecs.mean(axis=0) if spans else np.zeros(64)
            out.append(mean / max(np.linalg.norm(mean), 1e-12))
        return np.asarray(out, np.float32), toks


ONE_CALL = Cost(calls=1, tokens=10)


class ScheduleScript:
    """Answers each step from queues of scripted outcomes and records the steps it saw."""

    def __init__(
        self,
        *,
        light: list[LightOutcome] | None = None,
        reflect: list[ReflectOutcome] | None = None,
        candidates: int = 30,
    ) -> None:
        self.light: Iterator[LightOutcome] = iter(light or [])
        self.reflect: Iterator[ReflectOutcome] = iter(reflect or [])
        self.candidates = candidates
        self.steps: list[Step] = []

    def __call__(self, step: Step) -> Outcome:
        self.steps.append(step)
        if isinstance(step, LightStep):
            return next(self.light)
        if isinstance(step, DeepRetrieveStep):
            return RetrieveOutcome(count=self.candidates)
        if isinstance(step, SelectStep):
            batches = -(-step.max_candidates // step.batch_size) if step.use_model else 0
            return SelectOutcome(chosen=3, cost=Cost(calls=batches, tokens=10 * batches))
        if isinstance(step, DeepAnswerStep):
            return DeepAnswerOutcome(answer=f"deep{step.round}", cost=ONE_CALL)
        assert isinstance(step, ReflectStep)
        return next(self.reflect)

    def kinds(self) -> list[str]:
        return [type(s).__name__.removesuffix("Step") for s in self.steps]


def drive(
    script: Callable[[Step], Outcome], budget: Budget | None = None, **plan: Any
) -> ScheduleResult:
    """Run the scheduler for question "q0" under `plan`, answering each step with `script`."""
    gen = schedule("q0", ReadPlan(**plan), budget=budget)
    step = next(gen)
    while True:
        try:
            step = gen.send(script(step))
        except StopIteration as stop:
            return stop.value


def light(answer: str, complete: bool, fallback: bool = False) -> LightOutcome:
    """A light-answer outcome costing one call."""
    return LightOutcome(answer=answer, complete=complete, fallback=fallback, cost=ONE_CALL)


def reflect(complete: bool, new_question: str | None = None) -> ReflectOutcome:
    """A reflection outcome costing one call."""
    return ReflectOutcome(complete=complete, new_question=new_question, cost=ONE_CALL)


def scripted_config(server: Any, **overrides: Any) -> MemoryConfig:
    """A config whose roles talk to the scripted server (`server.base_url`): one attempt per
    call (no retries, no repair) and a 10 s timeout, so a scripted fault shows at once."""
    settings: dict[str, Any] = {
        "llm": "openai:test-model",
        "llm_base_url": server.base_url,
        "llm_api_key": "test-key",
        "llm_timeout_s": 10.0,
        "llm_max_retries": 0,
        "llm_repair_attempts": 0,
    }
    settings.update(overrides)
    return MemoryConfig.defaults(**settings)


_SEGMENT = re.compile(r'<segment id="([^"]+)"[^>]*>\n(.*?)\n</segment>', re.S)


def summarise_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted server's summarise reply: one fact per segment shown, its first line, so
    summaries carry real dialogue text."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    return {
        "segments": [
            {"segment_id": sid, "facts": [lines.splitlines()[0][:200]]}
            for sid, lines in _SEGMENT.findall(text)
        ]
    }
