"""The schema a constraining backend decodes under: narrowed to what one call offered."""

from __future__ import annotations

from datetime import datetime

from hymem.llm.formatting import annotate_relative_dates, format_segments
from hymem.llm.reply_schema import (
    MAX_ANSWER_TEXT,
    MAX_CONSTRAINED_FACTS,
    MAX_FACT_TEXT,
    MAX_SHORT_TEXT,
    judge_schema,
    plain_schema,
    select_schema,
    summarise_schema,
    update_schema,
)
from hymem.llm.roles import (
    ContextItem,
    JudgeOutput,
    LightAnswerOutput,
    ReflectOutput,
    SegmentInput,
    SelectOutput,
    SummariseOutput,
    UpdateOutput,
)


def _items(*ids: str) -> list[ContextItem]:
    return [ContextItem(id=i, text=f"memory {i}") for i in ids]


def test_select_ids_are_an_enum_of_the_candidates_shown() -> None:
    schema = select_schema(SelectOutput, _items("s1", "s2", "s2", "s3"))
    ids = schema["properties"]["ids"]
    assert ids["items"]["enum"] == ["s1", "s2", "s3"]
    assert ids["maxItems"] == 3
    assert schema["required"] == ["ids"]


def test_summarise_names_each_offered_segment_once_in_order_with_bounded_facts() -> None:
    segments = [
        SegmentInput(segment_id="seg-a", lines=["[2023-05-08 13:56] A: hi"] * 3),
        SegmentInput(segment_id="seg-b", lines=["[2023-05-08 14:00] B: yo"] * 20),
    ]
    schema = summarise_schema(SummariseOutput, segments)
    listed = schema["properties"]["segments"]
    assert listed["minItems"] == listed["maxItems"] == 2
    assert listed["items"] is False  # nothing past the segments shown
    first, second = listed["prefixItems"]
    assert first["properties"]["segment_id"] == {"const": "seg-a"}
    assert second["properties"]["segment_id"] == {"const": "seg-b"}
    # two facts per line of the segment, never past MAX_CONSTRAINED_FACTS
    assert first["properties"]["facts"]["maxItems"] == 6
    assert second["properties"]["facts"]["maxItems"] == MAX_CONSTRAINED_FACTS
    # each fact cites one to eight lines of its own segment, never past its last line
    for own, lines in ((first, 3), (second, 20)):
        fact = own["properties"]["facts"]["items"]["properties"]
        assert fact["text"]["maxLength"] == MAX_FACT_TEXT
        assert fact["turns"]["items"] == {"type": "integer", "enum": list(range(1, lines + 1))}
        assert fact["turns"]["minItems"] == 1
        assert fact["turns"]["maxItems"] == min(8, lines)
    # the narrowed schema still accepts what the role's model accepts
    SummariseOutput.model_validate(
        {"segments": [{"segment_id": "seg-a", "facts": [{"text": "x", "turns": [1]}]}]}
    )


def test_update_replies_carry_what_their_action_needs() -> None:
    schema = update_schema(UpdateOutput, _items("n1", "n2"))
    variants = {v["properties"]["action"]["const"]: v for v in schema["anyOf"]}
    assert set(variants) == {"update", "delete", "ignore"}
    assert variants["update"]["required"] == ["action", "text", "evidence_id"]
    assert variants["delete"]["required"] == ["action", "evidence_id"]
    assert variants["ignore"]["required"] == ["action"]
    evidence = variants["update"]["properties"]["evidence_id"]
    assert evidence == {"type": "string", "enum": ["n1", "n2"]}
    # every variant is a valid UpdateOutput
    UpdateOutput.model_validate({"action": "update", "text": "x", "evidence_id": "n1"})
    UpdateOutput.model_validate({"action": "ignore", "reason": "unrelated"})


def test_plain_schema_drops_titles_but_keeps_the_shape() -> None:
    schema = plain_schema(JudgeOutput)
    assert "title" not in schema
    assert schema["properties"]["label"]["enum"] == ["CORRECT", "WRONG"]
    assert schema["required"] == ["label"]


def test_free_text_is_bounded_so_a_looping_model_closes_its_string() -> None:
    assert plain_schema(LightAnswerOutput)["properties"]["answer"]["maxLength"] == MAX_ANSWER_TEXT
    reflect = plain_schema(ReflectOutput)["properties"]
    assert reflect["new_question"]["anyOf"][0]["maxLength"] == MAX_SHORT_TEXT
    assert "maxLength" not in plain_schema(JudgeOutput)["properties"]["label"]


def test_plain_schema_is_a_copy_the_caller_may_change() -> None:
    first = plain_schema(JudgeOutput)
    first["properties"]["label"]["enum"].append("MAYBE")
    assert plain_schema(JudgeOutput)["properties"]["label"]["enum"] == ["CORRECT", "WRONG"]


def test_relative_dates_are_annotated_against_the_lines_own_time() -> None:
    line = "[2023-05-08 13:56] Caroline: I went to a support group yesterday."
    assert annotate_relative_dates(line, None) == (
        "[2023-05-08 13:56] Caroline: I went to a support group yesterday [7 May 2023]."
    )
    # the line's own stamp wins over the session's
    assert "[7 May 2023]" in annotate_relative_dates(line, datetime(2024, 1, 1))


def test_relative_dates_fall_back_to_the_session_time_and_need_an_anchor() -> None:
    assert annotate_relative_dates("Mel: last week was great", datetime(2023, 7, 15)) == (
        "Mel: last week [the week of 3 July 2023] was great"
    )
    assert annotate_relative_dates("Mel: last week was great", None) == "Mel: last week was great"


def test_summariser_prompt_shows_the_annotated_lines() -> None:
    text = format_segments(
        [SegmentInput(segment_id="s", lines=["[2023-05-08 13:56] A: see you tomorrow"])]
    )
    assert "#1 [2023-05-08 13:56] A: see you tomorrow [9 May 2023]" in text


def test_the_judge_writes_its_reason_before_its_label() -> None:
    """Asked for the label alone, a 0.5B judge copied the prompt's example label for all 16
    answers of a LoCoMo sample; a required reason first lets the label follow a comparison."""
    from hymem.prompts.schemas import JudgeOutput

    schema = judge_schema(JudgeOutput)
    assert list(schema["properties"]) == ["reason", "label"]
    assert schema["required"] == ["reason", "label"]
    assert schema["properties"]["reason"]["maxLength"] == MAX_SHORT_TEXT
    assert JudgeOutput.model_validate({"label": "WRONG"}).reason == ""  # remote replies as before
