"""The grammars the llama.cpp backend decodes under: one for every role's reply schema, each
parsed by llama.cpp itself, and none letting a JSON string hold a raw control character (the
converter's own rule does, and a small model's newline inside a string made its reply no JSON)."""

from __future__ import annotations

from typing import Any

import pytest
from hymem.llm.reply_schema import plain_schema, select_schema, summarise_schema, update_schema
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    SegmentInput,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
)

llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
from hymem.llm.providers.llamacpp import grammar_text  # noqa: E402

ITEMS = [ContextItem(id=f"m{i}", text="x") for i in range(3)]
SEGMENTS = [
    SegmentInput(segment_id="s1", lines=["a", "b"]),
    SegmentInput(segment_id="s2", lines=["c"]),
]
SCHEMAS: dict[str, Any] = {
    "summarise": summarise_schema(SummariseOutput, SEGMENTS),
    "select": select_schema(SelectOutput, ITEMS),
    "update": update_schema(UpdateOutput, ITEMS),
    "light_answer": plain_schema(LightAnswerOutput),
    "deep_answer": plain_schema(DeepAnswerOutput),
    "reflect": plain_schema(ReflectOutput),
    "judge": plain_schema(JudgeOutput),
    "any JSON": None,
}


@pytest.mark.parametrize("role", sorted(SCHEMAS))
def test_every_role_has_a_grammar_llama_cpp_accepts(role: str) -> None:
    text = grammar_text(SCHEMAS[role])
    llama_grammar.LlamaGrammar.from_string(text, verbose=False)


@pytest.mark.parametrize("role", sorted(SCHEMAS))
def test_no_string_may_hold_a_raw_control_character(role: str) -> None:
    text = grammar_text(SCHEMAS[role])
    assert r'[^"\\]' not in text
    if "char ::=" in text or "string ::=" in text:  # a grammar with free text
        assert r"\x00-\x1F" in text


def test_a_fact_can_cite_only_the_lines_its_segment_has() -> None:
    """llama.cpp's converter drops integer bounds: under `minimum`/`maximum` a 0.5B model cited
    line 3 of a one-line segment, and the fact lost its source."""
    text = grammar_text(SCHEMAS["summarise"])
    cited = sorted(line for line in text.splitlines() if "turns-item ::=" in line)
    assert cited, text
    assert all("integer" not in line for line in cited)
    choices = sorted(line.split("::=")[1].strip() for line in cited)
    assert choices == ['"1"', '"1" | "2"']
