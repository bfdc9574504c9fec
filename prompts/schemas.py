"""Typed output models: the exact JSON fields each role's model reply must carry.

They live beside the prompt files because a prompt and its schema change together; the LLM
layer re-exports them from `hymem.llm.roles`. Validators normalise harmless variation (case of
labels and actions); the role-specific checks that make a reply usable (a complete answer is not
empty, chosen ids are among the candidates) live in `hymem.llm.checks`, so these models stay
permissive enough for the extractive roles to construct directly.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator


class SegmentSummary(BaseModel):
    segment_id: str
    facts: list[str] = Field(default_factory=list)  # key-information sentences

    @field_validator("facts")
    @classmethod
    def _strip_facts(cls, v: list[str]) -> list[str]:
        return [f.strip() for f in v if f.strip()]


class SummariseOutput(BaseModel):
    segments: list[SegmentSummary]


class LightAnswerOutput(BaseModel):
    answer: str
    complete: bool  # the context suffices to answer


class SelectOutput(BaseModel):
    ids: list[str]  # chosen candidate ids (subset of the batch)

    @field_validator("ids", mode="before")
    @classmethod
    def _ids_as_str(cls, v: object) -> object:
        # Models often echo numeric-looking ids as numbers; the id text is what matters.
        if isinstance(v, list):
            return [str(x) if isinstance(x, int | float) else x for x in v]
        return v


class DeepAnswerOutput(BaseModel):
    answer: str


class ReflectOutput(BaseModel):
    complete: bool
    new_question: str | None = None


UpdateAction = Literal["update", "delete", "ignore"]


class UpdateOutput(BaseModel):
    action: UpdateAction
    text: str | None = None  # merged sentence for "update"
    evidence_id: str | None = None  # the newer summary that justifies update/delete
    reason: str | None = None

    @field_validator("action", mode="before")
    @classmethod
    def _lower(cls, v: object) -> object:
        return v.strip().lower() if isinstance(v, str) else v


class JudgeOutput(BaseModel):
    label: Literal["CORRECT", "WRONG"]

    @field_validator("label", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.strip().upper() if isinstance(v, str) else v


__all__ = [
    "DeepAnswerOutput",
    "JudgeOutput",
    "LightAnswerOutput",
    "ReflectOutput",
    "SegmentSummary",
    "SelectOutput",
    "SummariseOutput",
    "UpdateAction",
    "UpdateOutput",
]
