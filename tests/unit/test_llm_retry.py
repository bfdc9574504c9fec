"""Retry policy with a fake clock: backoff, Retry-After, budget, deadline, no retry on 4xx."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hymem.core.errors import LLMAuthError, LLMRequestError, LLMUnavailable
from hymem.llm.backend import TransientLLMError
from hymem.llm.retry import RetryPolicy, call_with_retries


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def scripted(
    outcomes: list[object], t: FakeTime, cost_s: float = 0.0
) -> tuple[Callable[[float], object], list[float]]:
    calls: list[float] = []

    def attempt(time_left: float) -> object:
        calls.append(time_left)
        t.now += cost_s
        outcome = outcomes[min(len(calls) - 1, len(outcomes) - 1)]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return attempt, calls


POLICY = RetryPolicy(
    max_retries=3, deadline_s=10.0, initial_backoff_s=0.5, max_backoff_s=2.0, jitter_s=0.1
)


def run(
    attempt: Callable[[float], object], t: FakeTime, policy: RetryPolicy = POLICY, **kw: Any
) -> tuple[object, int]:
    return call_with_retries(
        attempt,
        role="select",
        policy=policy,
        sleep=t.sleep,
        clock=t.clock,
        rng=random.Random(0),
        **kw,
    )


def test_transient_then_success_counts_retries() -> None:
    t = FakeTime()
    seen: list[int] = []
    attempt, calls = scripted([TransientLLMError("500"), TransientLLMError("500"), "ok"], t)
    result, retries = run(attempt, t, on_retry=lambda: seen.append(1))
    assert (result, retries, len(calls), len(seen)) == ("ok", 2, 3, 2)
    assert 0.5 <= t.sleeps[0] <= 0.6 and 1.0 <= t.sleeps[1] <= 1.1  # exponential + jitter


def test_retry_after_is_honoured() -> None:
    t = FakeTime()
    attempt, _ = scripted([TransientLLMError("429", status_code=429, retry_after=3.0), "ok"], t)
    assert run(attempt, t)[0] == "ok"
    assert t.sleeps == [3.0]


def test_budget_exhausted_names_the_role() -> None:
    t = FakeTime()
    attempt, calls = scripted([TransientLLMError("HTTP 500: boom", status_code=500)], t)
    with pytest.raises(LLMUnavailable, match=r"\[select\].*4 attempt.*boom") as info:
        run(attempt, t)
    assert info.value.role == "select" and info.value.status_code == 500
    assert len(calls) == POLICY.max_retries + 1
    assert type(info.value) is LLMUnavailable  # not the internal transient subclass


@pytest.mark.parametrize("error", [LLMAuthError("401", status_code=401), LLMRequestError("400")])
def test_no_retry_on_client_errors(error: Exception) -> None:
    t = FakeTime()
    attempt, calls = scripted([error, "ok"], t)
    with pytest.raises(type(error)):
        run(attempt, t)
    assert len(calls) == 1 and t.sleeps == []


def test_deadline_bounds_attempts_and_waits() -> None:
    t = FakeTime()
    policy = RetryPolicy(
        max_retries=100, deadline_s=5.0, initial_backoff_s=1.0, max_backoff_s=1.0, jitter_s=0.0
    )
    attempt, calls = scripted([TransientLLMError("slow")], t, cost_s=1.5)
    with pytest.raises(LLMUnavailable):
        run(attempt, t, policy)
    assert t.now <= 5.0 + 1e-9
    assert calls[0] == 5.0 and all(left > 0 for left in calls)  # each attempt gets the time left


def test_retry_after_beyond_the_deadline_gives_up_at_once() -> None:
    t = FakeTime()
    attempt, calls = scripted([TransientLLMError("429", retry_after=60.0)], t)
    with pytest.raises(LLMUnavailable):
        run(attempt, t)
    assert len(calls) == 1 and t.sleeps == []


def test_backoff_is_capped() -> None:
    policy = RetryPolicy(initial_backoff_s=1.0, max_backoff_s=4.0, jitter_s=0.0)
    rng = random.Random(0)
    assert [policy.backoff(n, None, rng) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 4.0, 4.0]
    assert policy.backoff(1, 7.0, rng) == 7.0


def test_retry_after_header_forms() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from hymem.llm.providers.openai import _retry_after

    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert _retry_after({}) is None and _retry_after(None) is None
    assert _retry_after({"retry-after": "soon"}) is None
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (_retry_after({"retry-after": when}) or 0) <= 31


def test_provider_never_shows_the_key() -> None:
    from hymem.llm.providers.openai import OpenAIProvider

    provider = OpenAIProvider.resolve("http://127.0.0.1:1/v1", "sk-very-secret")
    assert "sk-very-secret" not in repr(provider)
    assert OpenAIProvider.resolve("http://127.0.0.1:1/v1", None).api_key == "not-needed"
