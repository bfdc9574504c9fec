"""The scheduler never calls a fallback's answer complete (driven with scripted outcomes)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hymem.read.scheduler import (
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


def drive(plan: ReadPlan, answer: Callable[[Step], Outcome]) -> ScheduleResult:
    gen = schedule("q", plan)
    step = next(gen)
    while True:
        try:
            step = gen.send(answer(step))
        except StopIteration as stop:
            result: ScheduleResult = stop.value
            return result


def scripted(*, light_fb: bool, deep_fb: bool, reflect_fb: bool) -> Callable[[Step], Outcome]:
    def answer(step: Step) -> Outcome:
        if isinstance(step, LightStep):
            return LightOutcome("light", complete=False, fallback=light_fb)
        if isinstance(step, DeepRetrieveStep):
            return RetrieveOutcome(count=3)
        if isinstance(step, SelectStep):
            return SelectOutcome(chosen=1)
        if isinstance(step, DeepAnswerStep):
            return DeepAnswerOutcome("Unable to answer", fallback=deep_fb)
        assert isinstance(step, ReflectStep)
        return ReflectOutcome(complete=True, fallback=reflect_fb)

    return answer


@pytest.mark.parametrize("depth", ["auto", "deep"])
@pytest.mark.parametrize("reflect_fb", [False, True])
@pytest.mark.parametrize("iterations", [0, 3])
def test_a_fallback_deep_answer_is_never_complete(
    depth: str, reflect_fb: bool, iterations: int
) -> None:
    """Before: every role falling back gave "Unable to answer" with complete=True."""
    plan = ReadPlan(depth=depth, max_iterations=iterations)  # type: ignore[arg-type]
    result = drive(plan, scripted(light_fb=True, deep_fb=True, reflect_fb=reflect_fb))
    assert result.path == "deep" and result.complete is False


def test_a_model_deep_answer_is_complete_when_reflection_says_so() -> None:
    result = drive(ReadPlan(), scripted(light_fb=False, deep_fb=False, reflect_fb=False))
    assert result.complete is True


def test_a_fallback_reflection_stops_and_leaves_the_answer_unchecked() -> None:
    result = drive(ReadPlan(), scripted(light_fb=False, deep_fb=False, reflect_fb=True))
    assert result.complete is True and result.iterations == 1  # as with no reflection


def test_a_light_answer_that_is_a_fallback_is_not_complete() -> None:
    def answer(step: Step) -> Outcome:
        if isinstance(step, LightStep):  # a fallback that (wrongly) claims completeness
            return LightOutcome("light", complete=True, fallback=True)
        return ReflectOutcome(complete=True)

    result = drive(ReadPlan(depth="light"), answer)
    assert result.complete is False
