"""When a failed delivery is tried again: exponential backoff with jitter, per row.

Each (event, endpoint) row keeps its own schedule, so a receiver that is down delays only its
own rows, and jitter spreads the retries of many rows that failed together (a receiver coming
back is not hit by all of them at the same instant)."""

from __future__ import annotations

import random
from collections.abc import Callable


def retry_delay(
    attempts: int,
    *,
    base_s: float,
    cap_s: float,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait after the `attempts`-th failed attempt: `base_s * 2**(attempts-1)`,
    capped at `cap_s`, then drawn between half of that and all of it ("equal jitter": never
    less than half, so a row cannot be retried in a tight loop)."""
    exponent = min(max(attempts, 1) - 1, 62)  # 2**62 seconds is past any cap
    delay = min(cap_s, base_s * 2.0**exponent)
    return delay / 2 + rand() * delay / 2


def schedule(max_attempts: int, *, base_s: float, cap_s: float) -> list[float]:
    """The longest waits between the attempts of a row that never succeeds (for the docs and
    the status command): it is dead after the last of `max_attempts`."""
    return [
        retry_delay(n, base_s=base_s, cap_s=cap_s, rand=lambda: 1.0) for n in range(1, max_attempts)
    ]


__all__ = ["retry_delay", "schedule"]
