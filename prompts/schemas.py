"""Typed output models: the exact JSON fields each role's model reply must carry.

They live beside the prompt files because a prompt and its schema change together; the LLM
layer re-exports them from `hymem.llm.roles`. Validators normalise harmless variation (case of
labels and actions); the role-specific checks that make a reply usable (a complete answer is not
empty, chosen ids are among the candidates) live in `hymem.llm.checks`, so these models stay
permissive enough for the extractive roles to construct directly.
"""

from __future__ import annotations

from typing import Annotated, Literal

from hymem.core.textclean import clip, normalise_text
from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    TypeAdapter,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

# A model's text is normalised exactly like a user's (`hymem.core.textclean`) and capped: a fact is
# one sentence of key information, an answer a short reply; what runs past is cut at a word.
MAX_FACT_CHARS = 1_000
MAX_FACTS_PER_SEGMENT = 64
MAX_ANSWER_CHARS = 4_000
MAX_FIELD_CHARS = 2_000  # rewritten questions, merged summaries, reasons, ids


def _clean(limit: int) -> AfterValidator:
    return AfterValidator(lambda v: clip(normalise_text(v), limit))


Fact = Annotated[str, _clean(MAX_FACT_CHARS)]
FACT: TypeAdapter[str] = TypeAdapter(Fact)  # a fact's text exactly as SegmentSummary will hold it
AnswerText = Annotated[str, _clean(MAX_ANSWER_CHARS)]
FieldText = Annotated[str, _clean(MAX_FIELD_CHARS)]


class FactSource(BaseModel):
    """Where an extractive fact was taken from: the segment line and the verbatim sentence."""

    line: int  # index into SegmentInput.lines
    text: str  # the sentence (or caption) as it stands in that line's turn


class FactItem(BaseModel):
    """One key-information sentence and the segment lines it rests on, numbered from 1 as the
    summariser was shown them. A bare string is a fact without attribution: its summary then
    stands for the whole segment, flagged (`Attribution.SEGMENT`)."""

    text: Fact
    turns: list[int] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _bare_text(cls, v: object) -> object:
        return {"text": v} if isinstance(v, str) else v

    @field_validator("turns", mode="before")
    @classmethod
    def _line_numbers(cls, v: object) -> object:
        """Numbers as models write them ("#3", "3", 3.0); anything else becomes 0, which no
        segment has, so `check_summarise` drops the attribution instead of the reply."""
        if v is None:
            return []
        if not isinstance(v, list):
            v = [v]
        return [_line_number(x) for x in v]


def _line_number(x: object) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, str) and x.strip().lstrip("#").isdigit():
        return int(x.strip().lstrip("#"))
    return 0


class SegmentSummary(BaseModel):
    segment_id: FieldText
    facts: list[FactItem] = Field(default_factory=list)  # key-information sentences
    # Fact text -> its source, filled by the extractive summariser only (it knows exactly).
    # Not part of the reply schema: a model is never asked for it and `check_summarise` drops
    # anything a model sends there.
    sources: SkipJsonSchema[dict[str, FactSource]] = Field(default_factory=dict, exclude=True)

    @field_validator("facts")
    @classmethod
    def _keep_facts(cls, v: list[FactItem]) -> list[FactItem]:
        """Empty facts dropped; at most MAX_FACTS_PER_SEGMENT kept (a runaway list of facts
        would flood the summary tier), the first ones, as the model ordered them."""
        return [f for f in v if f.text][:MAX_FACTS_PER_SEGMENT]

    @property
    def texts(self) -> list[str]:
        return [f.text for f in self.facts]


class SummariseOutput(BaseModel):
    segments: list[SegmentSummary]


class LightAnswerOutput(BaseModel):
    answer: AnswerText
    complete: bool  # the context suffices to answer


class SelectOutput(BaseModel):
    ids: list[FieldText]  # chosen candidate ids (subset of the batch)

    @field_validator("ids", mode="before")
    @classmethod
    def _ids_as_str(cls, v: object) -> object:
        # Models often echo numeric-looking ids as numbers; the id text is what matters.
        if isinstance(v, list):
            return [str(x) if isinstance(x, int | float) else x for x in v]
        return v


class DeepAnswerOutput(BaseModel):
    answer: AnswerText


class ReflectOutput(BaseModel):
    complete: bool
    new_question: FieldText | None = None


UpdateAction = Literal["update", "delete", "ignore"]


class UpdateOutput(BaseModel):
    action: UpdateAction
    text: FieldText | None = None  # merged sentence for "update"
    evidence_id: FieldText | None = None  # the newer summary that justifies update/delete
    reason: FieldText | None = None

    @field_validator("action", mode="before")
    @classmethod
    def _lower(cls, v: object) -> object:
        return v.strip().lower() if isinstance(v, str) else v


class JudgeOutput(BaseModel):
    # Written before the label: a small model asked for the label alone copies the prompt's
    # example label whatever the answers say; comparing first makes the label follow from it.
    reason: str = ""
    label: Literal["CORRECT", "WRONG"]

    @field_validator("label", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.strip().upper() if isinstance(v, str) else v


__all__ = [
    "FACT",
    "DeepAnswerOutput",
    "FactItem",
    "FactSource",
    "JudgeOutput",
    "LightAnswerOutput",
    "ReflectOutput",
    "SegmentSummary",
    "SelectOutput",
    "SummariseOutput",
    "UpdateAction",
    "UpdateOutput",
]
