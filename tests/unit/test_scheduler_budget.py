"""The per-ask budget stops escalation and reflection gracefully, and says so."""

from __future__ import annotations

import pytest
from hymem.read.budget import Budget
from hymem.read.scheduler import LightStep, SelectStep

from tests.doubles import ScheduleScript, drive, light, reflect


def test_budget_counts_and_affords() -> None:
    b = Budget(max_calls=3, max_tokens=100)
    assert b.affords(3) and not b.affords(4)
    b.charge(2, 50)
    assert b.remaining_calls == 1 and b.affords(1) and not b.affords(2)
    b.charge(0, 50)
    assert b.tokens_spent and not b.affords(1)
    assert not b.exhausted
    b.stop("why")
    assert b.exhausted and b.stops == ["why"]
    assert b.describe() == "2/3 calls, 100/100 tokens"


def test_unlimited_budget_affords_anything() -> None:
    b = Budget()
    b.charge(1000, 10**9)
    assert b.affords(10**6) and b.remaining_calls is None


@pytest.mark.parametrize("kwargs", [{"max_calls": 0}, {"max_tokens": 0}])
def test_nonpositive_limits_are_rejected(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Budget(**kwargs)


def test_call_budget_stops_escalation() -> None:
    s = ScheduleScript(light=[light("a", False)], reflect=[reflect(True)])
    result = drive(s, budget=Budget(max_calls=1))
    assert s.kinds() == ["Light"]
    assert not result.escalated and result.budget_exhausted
    assert result.answer == "a" and not result.complete


def test_token_budget_stops_escalation() -> None:
    s = ScheduleScript(light=[light("a", False)], reflect=[reflect(True)])
    result = drive(s, budget=Budget(max_tokens=10))
    assert s.kinds() == ["Light"]
    assert result.budget_exhausted and not result.escalated


def test_budget_trims_selection_to_the_calls_left() -> None:
    # light 1, then 3 calls left: 2 selection batches + 1 deep answer; no reflection.
    s = ScheduleScript(light=[light("a", False)], reflect=[reflect(True)])
    budget = Budget(max_calls=4)
    result = drive(s, n_deep=30, batch=10, budget=budget)
    select = next(st for st in s.steps if isinstance(st, SelectStep))
    assert select.max_candidates == 20 and select.use_model
    assert s.kinds() == ["Light", "DeepRetrieve", "Select", "DeepAnswer"]
    assert result.budget_exhausted and result.rounds[0].select_limited
    assert budget.calls == 4  # never more than allowed


def test_budget_without_spare_call_selects_by_similarity() -> None:
    s = ScheduleScript(light=[light("a", False)])
    result = drive(s, batch=10, budget=Budget(max_calls=2))
    select = next(st for st in s.steps if isinstance(st, SelectStep))
    assert not select.use_model and select.max_candidates == 10
    assert result.path == "deep" and result.budget_exhausted


def test_budget_stops_reflection_and_further_rounds() -> None:
    s = ScheduleScript(
        light=[light("a0", True), light("a1", True)],
        reflect=[reflect(False, "q1"), reflect(False, "q2")],
    )
    result = drive(s, max_iterations=3, budget=Budget(max_calls=3))
    assert s.kinds() == ["Light", "Reflect", "Light"]
    assert result.iterations == 2 and result.budget_exhausted
    assert [st.query for st in s.steps if isinstance(st, LightStep)] == ["q0", "q1"]


def test_deep_depth_always_answers_even_on_a_one_call_budget() -> None:
    s = ScheduleScript()
    result = drive(s, depth="deep", budget=Budget(max_calls=1))
    assert s.kinds() == ["DeepRetrieve", "Select", "DeepAnswer"]
    assert result.answer == "deep0" and result.budget_exhausted
