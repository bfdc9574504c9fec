"""One reply for one role call: budget growth, the client span, the cache, retries.

PromptedRoles decides what to ask and what to do with the answer; this decides how a reply is
got. A reply cut off at its token budget (finish reason "length") is asked again, same prompt,
with twice the budget up to `MAX_TOKENS_GROWTH` x `llm_max_tokens`, never with the fragment
shown; each request runs in a GenAI client span, is served from the response cache when it can
be, and otherwise goes to the backend within the role's deadline, retried on transient failures,
holding one of the backend's request slots only while it is out.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMContextOverflowError
from hymem.core.logging import get_logger
from hymem.core.tracing import span
from hymem.core.types import RoleUsage
from hymem.llm.accounting import UsageMeter, completion_usage
from hymem.llm.backend import ChatBackend, Completion, Message
from hymem.llm.cache import ResponseCache, cache_key
from hymem.llm.reply_schema import Schema
from hymem.llm.retry import RetryPolicy, call_with_retries
from hymem.llm.roles import Role
from opentelemetry.trace import SpanKind

log = get_logger("hymem.llm.replies")

# A reply cut off at its token budget is asked again with twice the budget, up to this many
# times `llm_max_tokens`: a long session summary needs more than a short answer.
MAX_TOKENS_GROWTH = 4


class Replier:
    """Gets replies from one backend for one PromptedRoles; thread-safe."""

    def __init__(
        self,
        backend: ChatBackend,
        config: MemoryConfig,
        *,
        retry_policy: RetryPolicy,
        cache: ResponseCache | None,
        meter: UsageMeter,
        slots: threading.Semaphore,
    ) -> None:
        self.backend = backend
        self.config = config
        self.retry_policy = retry_policy
        self.cache = cache
        self.meter = meter
        self.slots = slots
        self.label = backend.label
        # A backend whose output the schema shapes: the schema is then part of a reply's key.
        self.constrained = bool(getattr(backend, "constrained", False))

    def policy(self, role: Role) -> RetryPolicy:
        """The retry policy with `role`'s own deadline where llm_role_timeouts names one."""
        own = self.config.llm_role_timeouts.get(role.value)
        if own is None:
            return self.retry_policy
        return dataclasses.replace(self.retry_policy, deadline_s=own)

    def budget_cap(self) -> int:
        return self.config.llm_max_tokens * MAX_TOKENS_GROWTH

    def whole(
        self, role: Role, messages: list[Message], constraint: Schema
    ) -> tuple[Completion, RoleUsage, str | None]:
        """A reply that was not cut off, or the last cut-off one at the largest budget.

        A reply stopped at its token budget is a fragment: the same messages are sent again
        with twice the budget (up to `MAX_TOKENS_GROWTH` x llm_max_tokens). When the larger
        budget no longer fits the server's context window, the cut-off reply is what there is.
        """
        budget = self.config.llm_max_tokens
        cap = self.budget_cap()
        usage = RoleUsage()
        previous: tuple[Completion, str | None] | None = None
        while True:
            try:
                completion, used, key = self._complete(role, messages, budget, constraint)
            except LLMContextOverflowError:
                if previous is None:
                    raise
                log.warning("llm.budget_over_context", role=role.value, max_tokens=budget)
                return previous[0], usage, previous[1]
            usage = usage + used
            if not completion.truncated or budget >= cap:
                return completion, usage, key
            previous = (completion, key)
            grown = min(cap, budget * 2)
            log.warning("llm.reply_cut_off", role=role.value, max_tokens=budget, next=grown)
            budget = grown

    def _complete(
        self,
        role: Role,
        messages: list[Message],
        max_tokens: int,
        constraint: Schema,
    ) -> tuple[Completion, RoleUsage, str | None]:
        """One reply in a GenAI client span (`chat {model}`: role, model, token counts)."""
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.label.split(":", 1)[0],
            "gen_ai.request.model": self.backend.model,
            "gen_ai.request.max_tokens": max_tokens,
            "gen_ai.request.temperature": self.config.llm_temperature,
            "hymem.role": role.value,
        }
        with span(f"chat {self.backend.model}", attributes, kind=SpanKind.CLIENT) as current:
            completion, usage, key = self._reply(role, messages, max_tokens, constraint)
            current.set_attributes(
                {
                    "gen_ai.response.model": completion.model,
                    "gen_ai.response.finish_reasons": [completion.finish_reason or ""],
                    "gen_ai.usage.input_tokens": usage.prompt_tokens,
                    "gen_ai.usage.output_tokens": usage.completion_tokens,
                    "hymem.cache_hit": usage.cache_hits > 0,
                    "hymem.retries": usage.retries,
                }
            )
            return completion, usage, key

    def _reply(
        self,
        role: Role,
        messages: list[Message],
        max_tokens: int,
        constraint: Schema,
    ) -> tuple[Completion, RoleUsage, str | None]:
        """One validated-or-not reply: from the cache, or from the backend with retries."""
        params: dict[str, Any] = {
            "json_mode": True,
            "max_tokens": max_tokens,
            "temperature": self.config.llm_temperature,
        }
        if self.constrained:  # the schema shapes the reply, so it is part of the key
            params["json_schema"] = constraint
        key = None
        if self.cache is not None:
            key = cache_key(self.backend.model, messages, params)
            hit = self.cache.get(key)
            if hit is not None:
                self.meter.record(role.value, RoleUsage(cache_hits=1))
                log.info("llm.cache_hit", role=role.value)
                return hit, RoleUsage(cache_hits=1), key

        retries = RoleUsage()

        def on_retry() -> None:
            nonlocal retries
            retries = retries + RoleUsage(retries=1)
            self.meter.record(role.value, RoleUsage(retries=1))

        def attempt(time_left: float) -> Completion:
            return self.backend.complete(
                messages,
                role=role.value,
                json_mode=True,
                max_tokens=max_tokens,
                temperature=self.config.llm_temperature,
                timeout_s=max(0.001, time_left),
                json_schema=constraint,
            )

        # A request slot is held only while a request is out; the wait for one is bounded by
        # the call's deadline but does not shorten the request's own time.
        completion, _ = call_with_retries(
            attempt,
            role=role.value,
            policy=self.policy(role),
            on_retry=on_retry,
            slots=self.slots,
        )
        spent = completion_usage(messages, completion)
        self.meter.record(role.value, spent)
        return completion, spent + retries, key
