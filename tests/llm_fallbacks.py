"""Fault-injecting helpers for the model-fallback tests: a scripted server whose rules can also
match on the prompt's size (a server that rejects prompts over its context window), and the
faults a summariser or answer role meets in practice, as `add_rule` keyword sets."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest

from tests.llm_server import Rule, ScriptedLLMServer, _messages_text

# What a llama.cpp server answers to a prompt larger than its context window.
CONTEXT_OVERFLOW = "the request exceeds the available context size, try increasing it"

# A model failure, as add_rule keywords plus the config that makes it fail fast: 5xx beyond
# the retries, a timeout (every attempt outlasts the deadline), a reply that never validates.
MODEL_FAULTS = [
    pytest.param({"fault": "500"}, {}, id="5xx"),
    pytest.param({"fault": "slow", "delay_s": 1.5}, {"llm_timeout_s": 0.4}, id="timeout"),
    pytest.param({"fault": "malformed"}, {}, id="invalid_json"),
]


@dataclass
class _SizedRule:
    role: str | None
    min_chars: int
    rule: Rule


class SizedLLMServer(ScriptedLLMServer):
    """A `ScriptedLLMServer` whose size rules, tried before the others, match a request of
    `role` whose messages hold at least `min_chars` characters."""

    def __init__(self) -> None:
        super().__init__()
        self._sized: list[_SizedRule] = []
        self._sized_lock = threading.Lock()

    def add_size_rule(self, role: str | None, min_chars: int, **rule: Any) -> Rule:
        made = Rule(role=role, **rule)
        with self._sized_lock:
            self._sized.append(_SizedRule(role, min_chars, made))
        return made

    def _pick(self, role: str | None, body: dict[str, Any]) -> Rule | None:
        size = len(_messages_text(body))
        with self._sized_lock:
            for sized in self._sized:
                if sized.role in (None, role) and size >= sized.min_chars:
                    with self._lock:
                        self.requests.append((role, body))
                    sized.rule.used += 1
                    return sized.rule
        return super()._pick(role, body)


def prompt_text(body: dict[str, Any]) -> str:
    """Every message's text of one recorded request."""
    return _messages_text(body)
