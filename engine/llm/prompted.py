"""`PromptedRoles`: the seven roles as prompt files sent to a chat model.

Per role call: render `prompts/<role>.md` strictly -> (cache) -> bounded, retried backend call
-> a reply cut off at its token budget is asked again with a larger budget (`replies.Replier`)
-> extract and validate the JSON reply -> on an invalid reply, re-ask with the validation
error shown (`prompts/repair.md`), up to `llm_repair_attempts` times -> for the answer roles, a
plain-text reply becomes the answer (`RoleResult.salvaged`) -> then the role's typed fallback
(flagged on the result), or LLMOutputError (LLMTruncatedError when cut off) for roles without
one (summarise, judge). Backend failures surface as LLMUnavailable / LLMAuthError /
LLMRequestError (LLMContextOverflowError for a prompt over the context window) naming the role.
Each role's deadline is `MemoryConfig.llm_deadline_s(role)`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMOutputError, LLMTruncatedError
from hymem.core.logging import get_logger
from hymem.core.types import RoleUsage
from hymem.llm import checks, reply_schema
from hymem.llm.accounting import UsageMeter
from hymem.llm.backend import ChatBackend
from hymem.llm.cache import ResponseCache
from hymem.llm.formatting import (
    format_asked_on,
    format_memories,
    format_passages,
    format_pool,
    format_segments,
    format_span,
)
from hymem.llm.replies import Replier
from hymem.llm.retry import RetryPolicy
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    Role,
    RoleResult,
    SegmentInput,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
    role_result,
)
from hymem.llm.structured import InvalidReply, parse_reply, salvage_answer, schema_hint
from hymem.prompts import load_prompt
from pydantic import BaseModel

log = get_logger("hymem.llm.prompted")

M = TypeVar("M", bound=BaseModel)
Check = Callable[[M, list[str]], M]

# Roles whose plain-text reply is itself the answer when it never comes as JSON.
_ANSWER_ROLES: dict[Role, Callable[[str], BaseModel]] = {
    Role.LIGHT_ANSWER: lambda text: LightAnswerOutput(answer=text, complete=False),
    Role.DEEP_ANSWER: lambda text: DeepAnswerOutput(answer=text),
}


def _no_call(role: Role, output: M, why: str) -> RoleResult[M]:
    """A result decided without asking the model (nothing to ask about): costs nothing."""
    return role_result(
        output,
        role=role,
        prompt_version=load_prompt(role.value).label,
        notes=[f"{why}: no model call"],
    )


class PromptedRoles:
    """Roles backed by a chat model. Thread-safe; at most `llm_concurrency` requests in flight."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        config: MemoryConfig | None = None,
        retry_policy: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        meter: UsageMeter | None = None,
        slots: threading.Semaphore | None = None,
    ) -> None:
        """`slots` lets several PromptedRoles share one bound on requests in flight (e.g. all
        memories using one endpoint); by default each gets `llm_concurrency` of its own."""
        self.config = config or MemoryConfig.defaults()
        self.backend = backend
        self.label = backend.label
        self.retry_policy = retry_policy or RetryPolicy.from_config(self.config)
        if cache is None and self.config.llm_cache_dir:
            cache = ResponseCache(self.config.llm_cache_dir)
        self.cache = cache
        self.meter = meter or UsageMeter()
        self.replies = Replier(
            backend,
            self.config,
            retry_policy=self.retry_policy,
            cache=cache,
            meter=self.meter,
            slots=slots or threading.BoundedSemaphore(self.config.llm_concurrency),
        )

    # --- the roles -------------------------------------------------------------------------
    def summarise(self, segments: list[SegmentInput]) -> RoleResult[SummariseOutput]:
        if not segments:
            return _no_call(Role.SUMMARISE, SummariseOutput(segments=[]), "no segments")
        return self._run(
            Role.SUMMARISE,
            {"segments": format_segments(segments)},
            SummariseOutput,
            lambda out, notes: checks.check_summarise(out, segments, notes),
            fallback=None,
            constraint=reply_schema.summarise_schema(SummariseOutput, segments),
        )

    def light_answer(
        self,
        question: str,
        context: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[LightAnswerOutput]:
        return self._run(
            Role.LIGHT_ANSWER,
            {
                "question": question,
                "asked_on": format_asked_on(now),
                "memories": format_memories(context),
                "pool": format_pool(pool),
            },
            LightAnswerOutput,
            lambda out, _notes: checks.check_light(out),
            fallback=lambda: (LightAnswerOutput(answer="", complete=False), "escalate"),
        )

    def select_events(
        self, question: str, candidates: list[ContextItem]
    ) -> RoleResult[SelectOutput]:
        if not candidates:
            return _no_call(Role.SELECT, SelectOutput(ids=[]), "no candidates")
        return self._run(
            Role.SELECT,
            {"question": question, "candidates": format_memories(candidates)},
            SelectOutput,
            lambda out, notes: checks.check_select(out, candidates, notes),
            fallback=lambda: (checks.fallback_select(candidates), "kept top similarity hits"),
            constraint=reply_schema.select_schema(SelectOutput, candidates),
        )

    def deep_answer(
        self,
        question: str,
        passages: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[DeepAnswerOutput]:
        return self._run(
            Role.DEEP_ANSWER,
            {
                "question": question,
                "asked_on": format_asked_on(now),
                "passages": format_passages(passages),
                "pool": format_pool(pool),
            },
            DeepAnswerOutput,
            lambda out, _notes: checks.check_deep(out),
            fallback=lambda: checks.fallback_deep(pool),
        )

    def reflect(self, question: str, answer: str) -> RoleResult[ReflectOutput]:
        return self._run(
            Role.REFLECT,
            {"question": question, "answer": answer},
            ReflectOutput,
            lambda out, _notes: checks.check_reflect(out),
            fallback=lambda: (ReflectOutput(complete=True), "stop reflecting"),
        )

    def update(self, target: ContextItem, newer: list[ContextItem]) -> RoleResult[UpdateOutput]:
        if not newer:
            return _no_call(Role.UPDATE, UpdateOutput(action="ignore"), "no newer memories")
        return self._run(
            Role.UPDATE,
            {
                "target": f"[{target.id}] ({format_span(target.time_start, target.time_end)}) "
                f"{target.text.strip()}",
                "newer": format_memories(newer),
            },
            UpdateOutput,
            lambda out, notes: checks.check_update(out, newer, notes),
            fallback=lambda: (UpdateOutput(action="ignore"), "change nothing"),
            constraint=reply_schema.update_schema(UpdateOutput, newer),
        )

    def judge(
        self, question: str, gold: str, generated: str, *, prompt: str = "judge"
    ) -> RoleResult[JudgeOutput]:
        """`prompt` names the judging instructions (a benchmark may grade each question type
        by its own rules); every judge prompt takes the same three variables."""
        return self._run(
            Role.JUDGE,
            {"question": question, "gold": gold, "generated": generated},
            JudgeOutput,
            lambda out, _notes: out,
            fallback=None,
            prompt=prompt,
            constraint=reply_schema.judge_schema(JudgeOutput),
        )

    def cumulative_usage(self) -> dict[str, RoleUsage]:
        return self.meter.snapshot()

    def close(self) -> None:
        self.backend.close()

    # --- the machinery ---------------------------------------------------------------------
    def _run(
        self,
        role: Role,
        variables: dict[str, Any],
        schema: type[M],
        check: Check[M],
        fallback: Callable[[], tuple[M, str]] | None,
        prompt: str | None = None,
        constraint: reply_schema.Schema | None = None,
    ) -> RoleResult[M]:
        """`constraint`: the reply's JSON schema for this call (default: `schema`'s own), which a
        constraining backend decodes under."""
        started = time.perf_counter()
        constraint = constraint if constraint is not None else reply_schema.plain_schema(schema)
        template = load_prompt(prompt or role.value)
        messages = template.render(**variables)
        usage = RoleUsage()
        notes: list[str] = []
        error = ""
        last_text = ""
        cut_off = False
        for attempt in range(self.config.llm_repair_attempts + 1):
            completion, used, key = self.replies.whole(role, messages, constraint)
            usage = usage + used
            if completion.truncated:
                # A fragment even at the largest budget: showing it back would only grow the
                # prompt and be cut off again, so no repair re-ask.
                cut_off = True
                error = (
                    "the reply was cut off at its largest token budget (llm_max_tokens="
                    f"{self.config.llm_max_tokens}, grown up to {self.replies.budget_cap()} or the "
                    "context window)"
                )
                log.warning("llm.truncated_reply", role=role.value, error=error)
                break
            last_text = completion.text
            attempt_notes: list[str] = []

            def checked(reply: M, notes_of_attempt: list[str] = attempt_notes) -> M:
                return check(reply, notes_of_attempt)

            try:
                out = parse_reply(completion.text, schema, checked)
            except InvalidReply as exc:
                error = str(exc)
                log.warning("llm.invalid_reply", role=role.value, attempt=attempt, error=error)
                messages = [
                    *messages,
                    {"role": "assistant", "content": completion.text.strip() or "(empty reply)"},
                    *load_prompt("repair").render(error=error, schema=schema_hint(schema)),
                ]
                continue
            if key is not None and self.cache is not None and used.cache_hits == 0:
                self.cache.put(key, completion)
            notes.extend(attempt_notes)
            return self._result(role, out, usage, template.label, started, notes=notes)
        salvaged = None if cut_off else self._salvage(role, schema, last_text)
        if salvaged is not None:
            out, why = salvaged, "salvaged the plain-text reply as the answer"
        elif fallback is None:
            error_type = LLMTruncatedError if cut_off else LLMOutputError
            tries = "" if cut_off else f" after {self.config.llm_repair_attempts + 1} attempt(s)"
            raise error_type(f"reply never validated{tries}: {error}", role=role.value)
        else:
            out, why = fallback()
        usage = usage + RoleUsage(fallbacks=1)
        self.meter.record(role.value, RoleUsage(fallbacks=1))
        log.warning("llm.fallback", role=role.value, reason=why, error=error)
        return self._result(
            role,
            out,
            usage,
            template.label,
            started,
            notes=notes,
            fallback=f"{why}: {error}",
            salvaged=salvaged is not None,
        )

    @staticmethod
    def _salvage(role: Role, schema: type[M], text: str) -> M | None:
        """An answer role's plain-text reply as its output, when the reply is prose."""
        build = _ANSWER_ROLES.get(role)
        answer = salvage_answer(text) if build is not None else None
        if build is None or answer is None:
            return None
        out = build(answer)
        return out if isinstance(out, schema) else None

    def _result(
        self,
        role: Role,
        out: M,
        usage: RoleUsage,
        version: str,
        started: float,
        *,
        notes: list[str],
        fallback: str | None = None,
        salvaged: bool = False,
    ) -> RoleResult[M]:
        latency = (time.perf_counter() - started) * 1000.0
        log.info(
            "llm.role",
            role=role.value,
            model=self.label,
            prompt=version,
            fallback=fallback is not None,
            calls=usage.calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            latency_ms=round(latency, 1),
        )
        return role_result(
            out,
            role=role,
            usage=usage,
            fallback=fallback is not None,
            fallback_reason=fallback,
            prompt_version=version,
            latency_ms=latency,
            notes=notes,
            salvaged=salvaged,
        )
