"""Reply parsing, per-role checks and fallbacks: pure logic, no model."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.llm import checks
from hymem.llm.roles import (
    ContextItem,
    DeepAnswerOutput,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    SegmentInput,
    SegmentSummary,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
)
from hymem.llm.structured import InvalidReply, extract_json, parse_reply


@pytest.mark.parametrize(
    "text",
    [
        '{"answer": "Paris", "complete": true}',
        '  \n{"answer": "Paris", "complete": true}\n',
        '```json\n{"answer": "Paris", "complete": true}\n```',
        'Sure, here it is:\n```\n{"answer": "Paris", "complete": true}\n``` hope it helps',
        'The JSON is {"answer": "Paris", "complete": true} as requested.',
        'note [1] then {"answer": "Paris", "complete": true}',
    ],
)
def test_extract_json_finds_the_object(text: str) -> None:
    assert extract_json(text) == {"answer": "Paris", "complete": True}


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("  \n\t ", "empty"), ("no json here", "no JSON"), ("{broken", "no JSON")],
)
def test_extract_json_rejects(text: str, message: str) -> None:
    with pytest.raises(InvalidReply, match=message):
        extract_json(text)


def test_schema_invalid_reply_names_the_field() -> None:
    with pytest.raises(InvalidReply, match="complete"):
        parse_reply('{"answer": "Paris"}', LightAnswerOutput)
    with pytest.raises(InvalidReply, match="expected a JSON object"):
        parse_reply("[1, 2]", SelectOutput)
    with pytest.raises(InvalidReply, match="label"):
        parse_reply('{"label": "MAYBE"}', JudgeOutput)


def test_schemas_normalise_harmless_variation() -> None:
    assert parse_reply('{"label": " correct "}', JudgeOutput).label == "CORRECT"
    assert parse_reply('{"action": "IGNORE"}', UpdateOutput).action == "ignore"
    assert parse_reply('{"ids": [3, "s1"]}', SelectOutput).ids == ["3", "s1"]


def _items(*ids: str) -> list[ContextItem]:
    return [ContextItem(id=i, text=f"text {i}", time_start=datetime(2023, 5, 8)) for i in ids]


def test_select_drops_unknown_ids_and_notes_them() -> None:
    notes: list[str] = []
    out = checks.check_select(SelectOutput(ids=["b", "zz", "a", "b"]), _items("a", "b"), notes)
    assert out.ids == ["b", "a"]
    assert "zz" in notes[0]


def test_select_with_no_known_ids_is_invalid() -> None:
    with pytest.raises(InvalidReply, match="zz"):
        checks.check_select(SelectOutput(ids=["zz"]), _items("a"), [])


def test_select_may_choose_nothing() -> None:
    assert checks.check_select(SelectOutput(ids=[]), _items("a"), []).ids == []


def test_select_fallback_keeps_the_first_half_at_least_one() -> None:
    assert checks.fallback_select(_items("a", "b", "c", "d")).ids == ["a", "b"]
    assert checks.fallback_select(_items("a", "b", "c")).ids == ["a", "b"]
    assert checks.fallback_select(_items("a")).ids == ["a"]


def test_summarise_requires_every_segment_and_drops_unknown() -> None:
    segs = [SegmentInput(segment_id=s, lines=["[t] A: hi"]) for s in ("s1", "s2")]
    notes: list[str] = []
    out = checks.check_summarise(
        SummariseOutput(
            segments=[
                SegmentSummary(segment_id="s2", facts=["B"]),
                SegmentSummary(segment_id="x", facts=["?"]),
                SegmentSummary(segment_id="s1", facts=["A"]),
                SegmentSummary(segment_id="s1", facts=["A", "A2"]),
            ]
        ),
        segs,
        notes,
    )
    assert [(s.segment_id, s.texts) for s in out.segments] == [("s1", ["A", "A2"]), ("s2", ["B"])]
    assert any("'x'" in n for n in notes)
    with pytest.raises(InvalidReply, match="s2"):
        checks.check_summarise(
            SummariseOutput(segments=[SegmentSummary(segment_id="s1")]), segs, []
        )


def test_light_and_reflect_and_deep_checks() -> None:
    with pytest.raises(InvalidReply):
        checks.check_light(LightAnswerOutput(answer=" ", complete=True))
    assert checks.check_light(LightAnswerOutput(answer="", complete=False)).complete is False
    with pytest.raises(InvalidReply):
        checks.check_reflect(ReflectOutput(complete=False, new_question=None))
    with pytest.raises(InvalidReply):
        checks.check_deep(DeepAnswerOutput(answer=""))


def test_update_checks_evidence() -> None:
    newer = _items("n1", "n2")
    with pytest.raises(InvalidReply, match="text"):
        checks.check_update(UpdateOutput(action="update"), newer, [])
    notes: list[str] = []
    out = checks.check_update(
        UpdateOutput(action="update", text="merged", evidence_id="zz"), newer, notes
    )
    assert out.evidence_id is None and "zz" in notes[0]
    with pytest.raises(InvalidReply, match="evidence_id"):
        checks.check_update(UpdateOutput(action="delete"), newer, [])
    inferred = checks.check_update(UpdateOutput(action="delete"), newer[:1], [])
    assert inferred.evidence_id == "n1"


def test_deep_fallback_prefers_the_latest_pool_answer() -> None:
    out, _ = checks.fallback_deep(["first", "second", "  "])
    assert out.answer == "second"
    out, why = checks.fallback_deep([])
    assert out.answer == checks.UNABLE_TO_ANSWER and "no usable" in why


def test_the_first_valid_object_in_prose_wins() -> None:
    text = 'Format: {"example": 1}. My reply: {"answer": "Paris", "complete": true}'
    assert parse_reply(text, LightAnswerOutput).answer == "Paris"
    with pytest.raises(InvalidReply, match="answer"):
        parse_reply('{"example": 1} and {"other": 2}', LightAnswerOutput)


def test_a_raw_newline_inside_a_string_is_read_not_rejected() -> None:
    reply = '{"answer": "first line\nsecond line", "complete": true}'
    out = parse_reply(reply, LightAnswerOutput)
    assert out.complete and "second line" in out.answer
