"""LLM-judge QA scoring, with the benchmark's per-type rules: each question type is graded by
its own prompt file (`prompts/judge_lme_*.md`), and abstention questions are correct when the
answer says it cannot tell, as LongMemEval intends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hymem.core.errors import ConfigError

if TYPE_CHECKING:
    from hymem.evaluation.longmemeval.data import LmeQuestion
    from hymem.llm.roles import Roles

ABSTENTION_PROMPT = "judge_lme_abstention"
DEFAULT_PROMPT = "judge_lme_default"
JUDGE_PROMPTS: dict[str, str] = {
    "single-session-user": DEFAULT_PROMPT,
    "single-session-assistant": DEFAULT_PROMPT,
    "multi-session": DEFAULT_PROMPT,
    "temporal-reasoning": "judge_lme_temporal",
    "knowledge-update": "judge_lme_update",
    "single-session-preference": "judge_lme_preference",
}


def judge_prompt(question: LmeQuestion) -> str:
    """The prompt file grading this question; a type the benchmark does not define gets the
    default rules."""
    if question.abstention:
        return ABSTENTION_PROMPT
    return JUDGE_PROMPTS.get(question.question_type, DEFAULT_PROMPT)


def judge_prompt_versions() -> dict[str, str]:
    """`name@version` of every LongMemEval judge prompt, for the run's manifest."""
    from hymem.prompts import load_prompt

    names = sorted({*JUDGE_PROMPTS.values(), ABSTENTION_PROMPT})
    return {name: load_prompt(name).label for name in names}


def judge_answer(judge: Roles, question: LmeQuestion, generated: str) -> tuple[bool, str, str]:
    """(correct, label, prompt label) of one answer."""
    name = judge_prompt(question)
    res = judge.judge(question.question, question.answer, generated, prompt=name)
    label = res.output.label.strip().upper()
    return label == "CORRECT", label, res.prompt_version or name


def check_judge_spec(spec: str | None) -> None:
    """LongMemEval answers (preferences, abstentions, off-by-one dates) need a model to grade."""
    if spec is not None and spec.strip() == "extractive":
        raise ConfigError("--judge needs a model (e.g. openai:gpt-4.1-mini), not 'extractive'")


__all__ = [
    "ABSTENTION_PROMPT",
    "DEFAULT_PROMPT",
    "JUDGE_PROMPTS",
    "check_judge_spec",
    "judge_answer",
    "judge_prompt",
    "judge_prompt_versions",
]
