"""Algorithm 1 as data: drive the scheduler with scripted outcomes, no disk and no model."""

from __future__ import annotations

import pytest
from hymem.read.budget import Budget
from hymem.read.scheduler import (
    DeepAnswerStep,
    DeepRetrieveStep,
    Depth,
    LightOutcome,
    LightStep,
    RetrieveOutcome,
    SelectStep,
    escalation,
    question_key,
    schedule,
)

from tests.doubles import ScheduleScript, drive, light, reflect


def test_complete_light_verdict_never_escalates() -> None:
    s = ScheduleScript(light=[light("a", True)], reflect=[reflect(True)])
    result = drive(s)
    assert s.kinds() == ["Light", "Reflect"]
    assert (result.path, result.escalated, result.escalation_reason) == ("light", False, None)
    assert result.answer == "a" and result.complete and result.iterations == 1


def test_incomplete_light_verdict_escalates_with_reason_verdict() -> None:
    s = ScheduleScript(light=[light("a", False)], reflect=[reflect(True)])
    result = drive(s, k=5, n_deep=30, batch=10)
    assert s.kinds() == ["Light", "DeepRetrieve", "Select", "DeepAnswer", "Reflect"]
    assert s.steps[0] == LightStep(0, "q0", 5)
    assert s.steps[1] == DeepRetrieveStep(0, "q0", 30)
    assert s.steps[2] == SelectStep(0, "q0", 10, 30, use_model=True)
    assert (result.path, result.escalated, result.escalation_reason) == ("deep", True, "verdict")
    assert result.answer == "deep0"
    assert result.pool == ["deep0"]


def test_light_fallback_escalates_with_reason_fallback() -> None:
    s = ScheduleScript(light=[light("", False, fallback=True)], reflect=[reflect(True)])
    result = drive(s)
    assert result.escalation_reason == "fallback"
    assert result.path == "deep"


def test_depth_light_never_escalates_and_keeps_incomplete_verdict() -> None:
    s = ScheduleScript(light=[light("a", False)])
    result = drive(s, depth="light", max_iterations=0)
    assert s.kinds() == ["Light"]
    assert (result.path, result.escalated, result.complete) == ("light", False, False)


def test_depth_deep_skips_light_path_with_reason_forced() -> None:
    s = ScheduleScript(reflect=[reflect(True)])
    result = drive(s, depth="deep")
    assert s.kinds() == ["DeepRetrieve", "Select", "DeepAnswer", "Reflect"]
    assert (result.path, result.escalation_reason) == ("deep", "forced")


def test_max_iterations_zero_is_one_round_without_reflection() -> None:
    s = ScheduleScript(light=[light("a", False)])
    result = drive(s, max_iterations=0)
    assert "Reflect" not in s.kinds()
    assert result.iterations == 1
    assert result.complete  # an unreflected deep answer has no verdict against it


def test_reflection_rewrites_query_and_pools_answers() -> None:
    s = ScheduleScript(
        light=[light("a0", True), light("a1", True)],
        reflect=[reflect(False, "sub question"), reflect(True)],
    )
    result = drive(s, max_iterations=3)
    lights = [st for st in s.steps if isinstance(st, LightStep)]
    assert [st.query for st in lights] == ["q0", "sub question"]
    assert result.pool == ["a0", "a1"]
    assert result.answer == "a1" and result.iterations == 2 and result.complete


def test_reflection_stops_at_the_cap() -> None:
    s = ScheduleScript(
        light=[light(f"a{i}", True) for i in range(5)],
        reflect=[reflect(False, f"q{i + 1}") for i in range(5)],
    )
    result = drive(s, max_iterations=2)
    assert s.kinds().count("Light") == 2
    assert s.kinds().count("Reflect") == 2
    assert result.iterations == 2 and not result.complete


def test_incomplete_reflection_without_new_question_stops() -> None:
    s = ScheduleScript(light=[light("a", True)], reflect=[reflect(False, None)])
    result = drive(s, max_iterations=3)
    assert result.iterations == 1 and not result.complete


def test_repeated_question_stops() -> None:
    s = ScheduleScript(light=[light("a", True)], reflect=[reflect(False, "q0")])
    assert drive(s, max_iterations=3).iterations == 1


def test_a_question_an_earlier_round_asked_stops_the_loop() -> None:
    # What Qwen 0.5B's reflection did: the question, the question with a caption, the question.
    s = ScheduleScript(
        light=[light(f"a{i}", False) for i in range(3)],
        reflect=[reflect(False, "q0 [a photo]"), reflect(False, "Q0?"), reflect(False, "q3")],
    )
    result = drive(s, max_iterations=3)
    assert [st.query for st in s.steps if isinstance(st, LightStep)] == ["q0", "q0 [a photo]"]
    assert result.iterations == 2 and not result.complete
    assert s.kinds().count("DeepAnswer") == 2


def test_a_question_differing_only_in_case_and_punctuation_is_a_repeat() -> None:
    s = ScheduleScript(light=[light("a", True)], reflect=[reflect(False, "  Q0 ?! ")])
    assert drive(s, max_iterations=3).iterations == 1
    assert question_key("Where does Alice live?") == question_key("where  does alice LIVE")
    assert question_key("Where does Alice live?") != question_key("Where did Alice live?")


def test_escalation_is_decided_per_round() -> None:
    s = ScheduleScript(
        light=[light("a0", True), light("a1", False)],
        reflect=[reflect(False, "q1"), reflect(True)],
    )
    result = drive(s, max_iterations=3)
    assert [r.escalated for r in result.rounds] == [False, True]
    assert result.escalated and result.path == "deep" and result.escalation_reason == "verdict"


def test_no_candidates_skips_selection_but_still_answers() -> None:
    s = ScheduleScript(light=[light("a", False)], reflect=[reflect(True)], candidates=0)
    result = drive(s)
    assert s.kinds() == ["Light", "DeepRetrieve", "DeepAnswer", "Reflect"]
    assert result.path == "deep"


def test_driver_sending_the_wrong_outcome_is_a_type_error() -> None:
    gen = schedule("q0")
    next(gen)
    with pytest.raises(TypeError):
        gen.send(RetrieveOutcome(count=1))


def test_budget_is_charged_from_outcomes() -> None:
    budget = Budget()
    drive(ScheduleScript(light=[light("a", False)], reflect=[reflect(True)]), budget=budget)
    # light 1 + select 3 batches + deep 1 + reflect 1
    assert budget.calls == 6 and budget.tokens == 60
    assert not budget.exhausted


def test_later_rounds_carry_earlier_answers_in_the_pool() -> None:
    s = ScheduleScript(
        light=[light("a0", True), light("a1", False)],
        reflect=[reflect(False, "q1"), reflect(True)],
    )
    drive(s, max_iterations=3)
    lights = [st for st in s.steps if isinstance(st, LightStep)]
    deep = next(st for st in s.steps if isinstance(st, DeepAnswerStep))
    assert [st.pool for st in lights] == [(), ("a0",)]
    assert deep.pool == ("a0",) and deep.round == 1


@pytest.mark.parametrize(
    ("depth", "outcome", "reason"),
    [
        ("deep", None, "forced"),
        ("light", LightOutcome("?", complete=False), None),
        ("auto", LightOutcome("a", complete=True), None),
        ("auto", LightOutcome("?", complete=False), "verdict"),
        ("auto", LightOutcome("", complete=False, fallback=True), "fallback"),
        ("auto", None, None),
    ],
)
def test_one_escalation_rule_serves_ask_and_context(
    depth: Depth, outcome: LightOutcome | None, reason: str | None
) -> None:
    assert escalation(depth, outcome) == reason
