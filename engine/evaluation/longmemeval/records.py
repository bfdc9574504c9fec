"""The rows a LongMemEval run appends: retrieval.jsonl (one per question and system, with the
ranked ids and the scores computed when written) and predictions.jsonl (one per answered
question and QA system). Both go through `PredictionLog`, so a rerun skips finished keys."""

from __future__ import annotations

from typing import Literal

from hymem.evaluation.predictions import AnswerRecord, Key, KeyedRecord
from pydantic import BaseModel, Field


class MatchedBudget(BaseModel):
    """A ranking cut to the tokens a hymem context used for the same question (longest prefix
    that fits, `hymem.evaluation.budget`), scored by recall_any/recall_all over the set of
    sessions (and, for turn units, turns) the cut holds."""

    budget: int  # the hymem context's tokens for this question
    tokens: int  # tokens of the units taken (<= budget)
    units: int
    first_over: bool = False  # the top unit alone exceeded the budget: nothing was taken
    metrics: dict[str, dict[str, float]] = Field(default_factory=dict)  # level -> scores


class RetrievalRecord(KeyedRecord):
    """One system's ranking for one question, scored at both levels."""

    question_id: str
    question_type: str
    system: str
    granularity: Literal["turn", "session"]  # what the system ranks natively
    ranked_ids: list[str]  # top native items best first (hymem hit ids or flat unit ids), <= 50
    turn_ids: list[str] = Field(default_factory=list)  # the whole turn ranking (turn systems)
    session_ids: list[str] = Field(default_factory=list)  # distinct sessions, first-seen order
    # {"session": {"recall_any@5": 1.0, ...}, "turn": {...}}; a level is absent when the
    # question has no evidence there or the system cannot be scored there.
    metrics: dict[str, dict[str, float]] = Field(default_factory=dict)
    skipped: dict[str, str] = Field(default_factory=dict)  # level -> why it is not scored
    context_tokens: dict[str, int] = Field(default_factory=dict)  # "k" -> tokens of top-k items
    unit_tokens: list[int] = Field(default_factory=list)  # tokens of each of ranked_ids
    # hymem context system -> this ranking at its budget (for itself: its whole context)
    matched: dict[str, MatchedBudget] = Field(default_factory=dict)
    latency_ms: float = 0.0
    finished_at: str = ""

    @property
    def key(self) -> Key:
        return (self.question_id, self.system)


class LmePrediction(AnswerRecord):
    """A LongMemEval answer and its judge verdict (under the question type's own rules)."""

    question_id: str
    question_type: str
    abstention: bool = False
    question_date: str = ""
    judge_prompt: str | None = None  # "judge_lme_temporal@1"

    @property
    def key(self) -> Key:
        return (self.system, self.question_id)


__all__ = ["LmePrediction", "MatchedBudget", "RetrievalRecord"]
