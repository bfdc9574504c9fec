"""The test doubles, in one place.

* `ScriptedRoles`: an in-process `Roles` (the protocol in hymem.llm.roles) whose every role
  answers from a script: a queue of replies per role, then the role's default (a callable of
  the role's arguments). It records each call (role, arguments, start/end time, the error it
  raised) and sums usage per role, thread-safely, so reader, write-path and sleep tests script
  it alike and check what was asked, in what order and how concurrently.
* `Fallback(output)`: a scripted reply that stands for the role's fallback (as after a
  malformed model reply); an exception instance as a reply is raised by the call.
* `FakeEmbedder`, `FakeSearcher`, `WordTokens`: the retrieval doubles, in
  `tests/doubles_retrieval.py`.
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hymem.core.config import MemoryConfig
from hymem.core.types import RoleUsage
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

# What each reading role costs per call (the reader's usage tests count on 12 tokens a call).
USAGE = RoleUsage(calls=1, prompt_tokens=10, completion_tokens=2)

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
