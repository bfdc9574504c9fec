"""A small model copies the prompt's template placeholders ("<sentence>", "<merged sentence or
null>") as its content; such a reply is never stored or shown as an answer."""

from __future__ import annotations

import pytest
from hymem.llm import checks
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    FactItem,
    LightAnswerOutput,
    ReflectOutput,
    SegmentInput,
    SegmentSummary,
    SummariseOutput,
    UpdateOutput,
)
from hymem.llm.structured import InvalidReply


@pytest.mark.parametrize(
    "text", ["<sentence>", " <merged sentence or null> ", "<answer>", "<id as shown>"]
)
def test_template_placeholders_are_recognised(text: str) -> None:
    assert checks.is_placeholder(text)


@pytest.mark.parametrize(
    "text", ["Alice adopted a cat.", "<3 cats", "a <b> c", "<b>bold</b> text", "", "<>"]
)
def test_real_text_is_not_a_placeholder(text: str) -> None:
    assert not checks.is_placeholder(text)


def test_a_summary_drops_placeholder_facts_and_keeps_the_real_ones() -> None:
    seg = SegmentInput(segment_id="s1", lines=["[2023-05-08 13:56] A: I adopted a cat."])
    out = SummariseOutput(
        segments=[
            SegmentSummary(
                segment_id="s1",
                facts=[
                    FactItem(text="<sentence>"),
                    FactItem(text="2023-05-08 13:56"),
                    FactItem(text="A adopted a cat.", turns=[1]),
                ],
            )
        ]
    )
    notes: list[str] = []
    checked = checks.check_summarise(out, [seg], notes)
    assert checked.segments[0].texts == ["A adopted a cat."]
    assert any("placeholder" in n for n in notes)


def test_an_update_whose_text_is_a_placeholder_is_invalid() -> None:
    newer = [ContextItem(id="n1", text="A moved to Berlin.")]
    with pytest.raises(InvalidReply, match="placeholder"):
        checks.check_update(
            UpdateOutput(action="update", text="<merged sentence or null>", evidence_id="n1"),
            newer,
            [],
        )


def test_answers_that_are_placeholders_are_invalid() -> None:
    with pytest.raises(InvalidReply, match="placeholder"):
        checks.check_light(LightAnswerOutput(answer="<answer>", complete=True))
    with pytest.raises(InvalidReply, match="placeholder"):
        checks.check_deep(DeepAnswerOutput(answer="<answer>"))


def test_a_placeholder_question_is_no_question() -> None:
    with pytest.raises(InvalidReply):
        checks.check_reflect(
            ReflectOutput(complete=False, new_question="<rewritten question, or null>")
        )
