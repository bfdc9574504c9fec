"""Thread-safe usage meters: calls, tokens, cache hits, retries and fallbacks per role.

Token counts come from the server's `usage` when it reports one, else from `count_tokens` on
the rendered prompt and the reply; a cache hit costs no tokens and counts as a hit, not a call.
"""

from __future__ import annotations

import threading

from hymem.core.types import RoleUsage
from hymem.llm.backend import Completion, Message
from hymem.llm.tokens import count_tokens


def completion_usage(messages: list[Message], completion: Completion) -> RoleUsage:
    """Usage of one model request: the server's numbers, or our own count where it gave none."""
    prompt = completion.prompt_tokens
    if prompt is None:
        prompt = sum(count_tokens(m.get("content", "")) for m in messages)
    done = completion.completion_tokens
    if done is None:
        done = count_tokens(completion.text)
    return RoleUsage(calls=1, prompt_tokens=prompt, completion_tokens=done)


class UsageMeter:
    """Cumulative usage per role name since construction; safe to update from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roles: dict[str, RoleUsage] = {}

    def record(self, role: str, usage: RoleUsage) -> None:
        with self._lock:
            self._roles[role] = self._roles.get(role, RoleUsage()) + usage

    def snapshot(self) -> dict[str, RoleUsage]:
        """A copy: later records do not change what the caller holds."""
        with self._lock:
            return {role: usage.model_copy() for role, usage in self._roles.items()}

    def total(self) -> RoleUsage:
        out = RoleUsage()
        for usage in self.snapshot().values():
            out = out + usage
        return out
