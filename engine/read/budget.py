"""Per-ask cost budget (pure): how many model calls and tokens one ask may still spend.

The budget never interrupts a model call in flight. It gates *optional* work before it starts:
escalating to the deep path, the number of event-selection batches, a reflection call, another
round. Once the deep path has started, its final deep-answer call is committed (an ask must
return an answer), so the token limit can be overshot by at most that one call; the call limit
is never overshot because the scheduler sizes each step to the calls that remain. That call
always reads the segments the chosen summaries link; the further segments a merged repeat's
turns lie in are read only while their text fits the tokens left.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Budget:
    """Counts what an ask has spent and records every time the limits cut work short."""

    max_calls: int | None = None
    max_tokens: int | None = None
    calls: int = 0
    tokens: int = 0
    stops: list[str] = field(default_factory=list)  # why optional work was skipped or trimmed

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1 or None, got {value}")

    def charge(self, calls: int, tokens: int) -> None:
        """Record what a finished step cost."""
        self.calls += calls
        self.tokens += tokens

    @property
    def remaining_calls(self) -> int | None:
        """Calls still allowed; None when calls are unlimited."""
        if self.max_calls is None:
            return None
        return max(0, self.max_calls - self.calls)

    @property
    def tokens_left(self) -> int | None:
        """Tokens still allowed; None when tokens are unlimited."""
        if self.max_tokens is None:
            return None
        return max(0, self.max_tokens - self.tokens)

    @property
    def tokens_spent(self) -> bool:
        """True once the token limit is reached: no optional step may start."""
        return self.max_tokens is not None and self.tokens >= self.max_tokens

    def affords(self, calls: int) -> bool:
        """Whether `calls` more model calls may start now."""
        if self.tokens_spent:
            return False
        remaining = self.remaining_calls
        return remaining is None or remaining >= calls

    def stop(self, reason: str) -> None:
        """Note that the budget skipped or trimmed a step (surfaced as budget_exhausted)."""
        self.stops.append(reason)

    @property
    def exhausted(self) -> bool:
        """True when the budget changed what the ask did."""
        return bool(self.stops)

    def describe(self) -> str:
        """Spent versus allowed, for messages: "3/4 calls, 812/1000 tokens"."""
        calls = f"{self.calls}/{self.max_calls if self.max_calls is not None else '∞'} calls"
        tokens = f"{self.tokens}/{self.max_tokens if self.max_tokens is not None else '∞'} tokens"
        return f"{calls}, {tokens}"
