"""The seven roles every model call goes through: what the write path, the read path, sleep and
the evaluations ask of a model, as the `Roles` protocol with two implementations:

* `PromptedRoles(backend, ...)`  renders prompts/*.md, calls a ChatBackend (openai:, hf:,
  gguf:, local), validates the JSON reply against prompts' pydantic schema, repairs, then
  falls back.
* `ExtractiveRoles(embedder)`    no model: deterministic, honest heuristics per role.

Each role's inputs are defined here and its outputs beside the prompts (`hymem.prompts.schemas`,
re-exported here); every call returns a `RoleResult` with its usage and whether a fallback
stood in. Role names used in usage accounting and traces are the `Role` values.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from hymem.core.types import RoleUsage
from pydantic import BaseModel, Field


class Role(StrEnum):
    SUMMARISE = "summarise"
    LIGHT_ANSWER = "light_answer"
    SELECT = "select"
    DEEP_ANSWER = "deep_answer"
    REFLECT = "reflect"
    UPDATE = "update"
    JUDGE = "judge"


# ---- inputs ------------------------------------------------------------------------------


class ContextItem(BaseModel):
    """A summary or segment as shown to a role: always with its dates."""

    id: str
    text: str
    time_start: datetime | None = None
    time_end: datetime | None = None


class SegmentInput(BaseModel):
    """One segment of the short-term buffer to summarise."""

    segment_id: str
    lines: list[str]  # "[2023-05-08 13:56] Caroline: ..." (possibly compressed text)
    session_time: datetime | None = None  # anchor for resolving relative dates


# ---- outputs: defined in prompts/schemas.py beside the prompts, re-exported here --------

from hymem.prompts.schemas import (  # noqa: E402
    DeepAnswerOutput,
    FactItem,
    FactSource,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    SegmentSummary,
    SelectOutput,
    SummariseOutput,
    UpdateAction,
    UpdateOutput,
)

OutT = TypeVar("OutT", bound=BaseModel)


class RoleResult(BaseModel, Generic[OutT]):
    """A validated role output plus what it cost and whether a fallback stood in."""

    role: Role
    output: OutT
    usage: RoleUsage = Field(default_factory=RoleUsage)
    fallback: bool = False
    fallback_reason: str | None = None
    prompt_version: str = ""  # "light_answer@1"; "extractive" for the extractive roles
    latency_ms: float = 0.0
    notes: list[str] = Field(default_factory=list)  # e.g. unknown ids the model returned, dropped
    # An answer role's output holds the model's plain-text reply as its answer (it never gave
    # the JSON asked for): `fallback` is also set, and light_answer's `complete` is False, since
    # the model never said whether its context sufficed.
    salvaged: bool = False


def role_result(output: OutT, **fields: Any) -> RoleResult[OutT]:
    """A RoleResult parametrised by `output`'s runtime class, so pydantic validates and dumps
    `output` as that model rather than as its generic bound."""
    # A class known only at runtime is no type expression, so the subscript goes through Any.
    generic: Any = RoleResult
    result: RoleResult[OutT] = generic[type(output)](output=output, **fields)
    return result


class Roles(Protocol):
    """What the rest of hymem needs from a model. Thread-safe: calls may run concurrently."""

    label: str  # "extractive", "openai:gpt-4.1-mini", "hf:/path" -- shown on every result

    def summarise(self, segments: list[SegmentInput]) -> RoleResult[SummariseOutput]:
        """One call for the whole buffer. Raises LLMError when the backend is unavailable
        (the write path then keeps turns pending): summarise has no silent fallback."""
        ...

    def light_answer(
        self,
        question: str,
        context: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[LightAnswerOutput]:
        """Fallback: complete=False (escalate). `now` is when the question is asked (naive
        UTC; None: unknown), against which relative expressions in it are read."""
        ...

    def select_events(
        self, question: str, candidates: list[ContextItem]
    ) -> RoleResult[SelectOutput]:
        """Fallback: the candidates' top similarity hits (first half, in given order)."""
        ...

    def deep_answer(
        self,
        question: str,
        passages: list[ContextItem],
        pool: list[str],
        *,
        now: datetime | None = None,
    ) -> RoleResult[DeepAnswerOutput]: ...

    def reflect(self, question: str, answer: str) -> RoleResult[ReflectOutput]:
        """Fallback: complete=True (stop; never loop on a broken reflector)."""
        ...

    def update(self, target: ContextItem, newer: list[ContextItem]) -> RoleResult[UpdateOutput]:
        """Fallback: ignore."""
        ...

    def judge(
        self, question: str, gold: str, generated: str, *, prompt: str = "judge"
    ) -> RoleResult[JudgeOutput]:
        """`prompt`: the judging instructions' prompt file (e.g. one per question type)."""
        ...

    def cumulative_usage(self) -> dict[str, RoleUsage]:
        """Usage per role since construction (thread-safe)."""
        ...

    def close(self) -> None: ...


RolesProvider = Callable[[], Roles]
"""How components receive the roles: a zero-argument callable (`hymem.llm.LazyRoles`), called
when a role is needed, so building the roles stays off the cost of opening a Memory."""

__all__ = [
    "ContextItem",
    "DeepAnswerOutput",
    "FactItem",
    "FactSource",
    "JudgeOutput",
    "LightAnswerOutput",
    "OutT",
    "ReflectOutput",
    "Role",
    "RoleResult",
    "Roles",
    "RolesProvider",
    "SegmentInput",
    "SegmentSummary",
    "SelectOutput",
    "SummariseOutput",
    "UpdateAction",
    "UpdateOutput",
    "role_result",
]
