"""Retries in one place: tenacity around a single backend attempt.

Exponential backoff with jitter on transient failures (429 honouring Retry-After, 5xx, timeouts,
connection errors); never on auth or other request errors, which pass straight through. The whole
call -- attempts and waits together -- stays within one deadline: each attempt gets the time
that is left, a wait never runs past it, and a Retry-After longer than the time left ends the
call at once instead of sleeping into certain failure.

With `slots` (the backend's bound on requests in flight), each attempt first waits for a free
slot. Time queued behind the backend's other calls is not the model's slowness, so it does not
eat the attempt's time (the deadline moves on by the time waited); the queueing itself is
bounded by the same deadline, so a call waits at most `deadline_s` in all for slots.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMUnavailable
from hymem.core.logging import get_logger
from hymem.llm.backend import TransientLLMError
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
        base = min(self.max_backoff_s, self.initial_backoff_s * 2.0 ** (retry_number - 1))
        wait = base + rng.uniform(0.0, self.jitter_s)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return wait


@dataclass
class _Rules:
    """Tenacity's callbacks for one call, all measured against the call's deadline: when to
    stop, how long to wait, and what to log (and count) before each retry. The deadline moves
    on by the time spent waiting for a request slot."""

    role: str
    policy: RetryPolicy
    deadline: float
    clock: Callable[[], float]
    rng: random.Random
    on_retry: Callable[[], None] | None

    def time_left(self) -> float:
        return self.deadline - self.clock()

    def stop(self, state: RetryCallState) -> bool:
        """Out of retries, out of time, or told by Retry-After to wait past the deadline."""
        if state.attempt_number > self.policy.max_retries:
            return True
        left = self.time_left()
        exc = _transient(state)
        return left <= 0 or (exc is not None and (exc.retry_after or 0.0) >= left)

    def wait(self, state: RetryCallState) -> float:
        exc = _transient(state)
        pause = self.policy.backoff(
            state.attempt_number, exc.retry_after if exc else None, self.rng
        )
        return max(0.0, min(pause, self.time_left()))

    def before_sleep(self, state: RetryCallState) -> None:
        exc = _transient(state)
        log.warning(
            "llm.retry",
            role=self.role,
            attempt=state.attempt_number,
            status=exc.status_code if exc else None,
            wait_s=round(state.upcoming_sleep, 3),
            error=str(exc),
        )
        if self.on_retry is not None:
            self.on_retry()

    def retrying(self, sleep: Callable[[float], None]) -> Retrying:
        return Retrying(
            retry=retry_if_exception_type(TransientLLMError),
            stop=self.stop,
            wait=self.wait,
            sleep=sleep,
            before_sleep=self.before_sleep,
            reraise=True,
        )


def _transient(state: RetryCallState) -> TransientLLMError | None:
    """The transient failure that ended the attempt, if that is how it ended."""
    exc = state.outcome.exception() if state.outcome else None
    return exc if isinstance(exc, TransientLLMError) else None


def call_with_retries(
    attempt: Callable[[float], T],
    *,
    role: str,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
    on_retry: Callable[[], None] | None = None,
    slots: threading.Semaphore | None = None,
) -> tuple[T, int]:
    """Run `attempt(time_left_s)` until it succeeds; return its result and the retries used.

    Raises LLMUnavailable naming `role` once retries or the deadline run out, or when no slot
    of `slots` came free within the deadline; LLMAuthError and LLMRequestError from the attempt
    propagate unchanged on the first occurrence. `on_retry` is called before each retry, so
    usage meters count retries even when the call finally fails.
    """
    deadline = clock() + policy.deadline_s
    rules = _Rules(role, policy, deadline, clock, rng or random.Random(), on_retry)
    queue_left = policy.deadline_s
    attempts = 0
    try:
        for state in rules.retrying(sleep):
            with state:
                attempts = state.retry_state.attempt_number
                if rules.time_left() <= 0:
                    raise TransientLLMError("deadline reached before the attempt", role=role)
                if slots is None:
                    result = attempt(rules.time_left())
                    continue
                waited_from = clock()
                free = slots.acquire(timeout=max(0.0, queue_left))
                waited = clock() - waited_from
                queue_left -= waited
                rules.deadline += waited
                if not free:
                    raise LLMUnavailable(
                        f"no free request slot within {policy.deadline_s:g}s", role=role
                    )
                try:
                    result = attempt(rules.time_left())
                finally:
                    slots.release()
    except TransientLLMError as exc:
        last = str(exc).removeprefix(f"[{role}] ")
        raise LLMUnavailable(
            f"unavailable after {attempts} attempt(s) within {policy.deadline_s:g}s: {last}",
            role=role,
            status_code=exc.status_code,
            body=exc.body,
        ) from exc
    return result, attempts - 1
