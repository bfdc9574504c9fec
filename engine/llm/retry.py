"""Retries in one place: tenacity around a single backend attempt.

Exponential backoff with jitter on transient failures (429 honouring Retry-After, 5xx, timeouts,
connection errors); never on auth or other request errors, which pass straight through. The whole
call -- attempts and waits together -- stays within one deadline: each attempt gets the time
that is left, a wait never runs past it, and a Retry-After longer than the time left ends the
call at once instead of sleeping into certain failure.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from hymem.config import MemoryConfig
from hymem.errors import LLMUnavailable
from hymem.llm.backend import TransientLLMError
from hymem.logging import get_logger
from tenacity import RetryCallState, Retrying, retry_if_exception_type

log = get_logger("hymem.llm.retry")

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Defaults suit hosted APIs; tests pass millisecond backoffs."""

    max_retries: int = 4
    deadline_s: float = 60.0
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    jitter_s: float = 0.25

    @classmethod
    def from_config(cls, config: MemoryConfig) -> RetryPolicy:
        return cls(max_retries=config.llm_max_retries, deadline_s=config.llm_timeout_s)

    def backoff(self, retry_number: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry `retry_number` (1-based): exponential plus jitter, and
        never less than the server's Retry-After."""
        base = min(self.max_backoff_s, self.initial_backoff_s * 2 ** (retry_number - 1))
        wait = base + rng.uniform(0.0, self.jitter_s)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return wait


def call_with_retries(
    attempt: Callable[[float], T],
    *,
    role: str,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
    on_retry: Callable[[], None] | None = None,
) -> tuple[T, int]:
    """Run `attempt(time_left_s)` until it succeeds; return its result and the retries used.

    Raises LLMUnavailable naming `role` once retries or the deadline run out; LLMAuthError and
    LLMRequestError from the attempt propagate unchanged on the first occurrence. `on_retry` is
    called before each retry, so usage meters count retries even when the call finally fails.
    """
    rng = rng or random.Random()
    deadline = clock() + policy.deadline_s

    def time_left() -> float:
        return deadline - clock()

    def _exc(state: RetryCallState) -> TransientLLMError | None:
        exc = state.outcome.exception() if state.outcome else None
        return exc if isinstance(exc, TransientLLMError) else None

    def stop(state: RetryCallState) -> bool:
        if state.attempt_number > policy.max_retries:
            return True
        left = time_left()
        exc = _exc(state)
        return left <= 0 or (exc is not None and (exc.retry_after or 0.0) >= left)

    def wait(state: RetryCallState) -> float:
        exc = _exc(state)
        pause = policy.backoff(state.attempt_number, exc.retry_after if exc else None, rng)
        return max(0.0, min(pause, time_left()))

    def before_sleep(state: RetryCallState) -> None:
        exc = _exc(state)
        log.warning(
            "llm.retry",
            role=role,
            attempt=state.attempt_number,
            status=exc.status_code if exc else None,
            wait_s=round(state.upcoming_sleep, 3),
            error=str(exc),
        )
        if on_retry is not None:
            on_retry()

    retrying = Retrying(
        retry=retry_if_exception_type(TransientLLMError),
        stop=stop,
        wait=wait,
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    attempts = 0
    try:
        for state in retrying:
            with state:
                attempts = state.retry_state.attempt_number
                left = time_left()
                if left <= 0:
                    raise TransientLLMError("deadline reached before the attempt", role=role)
                result = attempt(left)
    except TransientLLMError as exc:
        last = str(exc).removeprefix(f"[{role}] ")
        raise LLMUnavailable(
            f"unavailable after {attempts} attempt(s) within {policy.deadline_s:g}s: {last}",
            role=role,
            status_code=exc.status_code,
            body=exc.body,
        ) from exc
    return result, attempts - 1
