"""Source turns on every summary: how a reply's line numbers are read and checked, how they
become `source_turn_ids`, the flagged whole-segment fallback, and merges. Pure logic."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.types import Attribution, SegmentRecord, SummaryRecord
from hymem.llm import checks
from hymem.llm.extractive.summarise import summarise_segment
from hymem.llm.formatting import format_segments
from hymem.llm.roles import (
    FactItem,
    FactSource,
    SegmentInput,
    SegmentSummary,
    SummariseOutput,
)
from hymem.llm.structured import parse_reply
from hymem.sleep.plan import merged_attribution
from hymem.write.records import build_summaries

from tests.log_events import capture_events

T0 = datetime(2023, 5, 8, 13, 56)


def _segment(seg_id: str, turn_ids: list[str]) -> SegmentRecord:
    return SegmentRecord(
        id=seg_id,
        user_id="u",
        session_ids=["s1"],
        turn_ids=turn_ids,
        text="\n".join(f"A: line {t}" for t in turn_ids),
        created_at=T0,
    )


def _summary(sid: str, turns: list[str], attribution: Attribution) -> SummaryRecord:
    return SummaryRecord(
        id=sid,
        user_id="u",
        segment_id="g",
        text=sid,
        source_turn_ids=turns,
        attribution=attribution,
        created_at=T0,
        updated_at=T0,
    )


@pytest.mark.parametrize(
    ("raw", "text", "turns"),
    [
        ("Alice moved to Paris.", "Alice moved to Paris.", []),  # a bare string: no attribution
        ({"text": "A", "turns": [2, 3]}, "A", [2, 3]),
        ({"text": "A", "turns": ["#2", " 3 ", 4.0]}, "A", [2, 3, 4]),
        ({"text": "A", "turns": 2}, "A", [2]),
        ({"text": "A", "turns": None}, "A", []),
        ({"text": "A", "turns": ["two", True, 2.5]}, "A", [0, 0, 0]),  # unusable: 0 is no line
    ],
)
def test_fact_items_read_line_numbers_as_models_write_them(
    raw: object, text: str, turns: list[int]
) -> None:
    item = FactItem.model_validate(raw)
    assert (item.text, item.turns) == (text, turns)


def test_a_reply_with_objects_and_strings_parses() -> None:
    reply = (
        '{"segments": [{"segment_id": "g", "facts": [{"text": "A", "turns": [1]}, "B", '
        '{"text": "  ", "turns": [1]}]}]}'
    )
    out = parse_reply(reply, SummariseOutput)
    assert [(f.text, f.turns) for f in out.segments[0].facts] == [("A", [1]), ("B", [])]


def test_check_summarise_drops_an_attribution_naming_lines_the_segment_lacks() -> None:
    seg = SegmentInput(segment_id="g", lines=["A: one", "B: two"], session_time=T0)
    reply = SummariseOutput(
        segments=[
            SegmentSummary(
                segment_id="g",
                facts=[
                    FactItem(text="ok", turns=[2]),
                    FactItem(text="bad", turns=[1, 3]),
                    FactItem(text="zero", turns=[0]),
                ],
            )
        ]
    )
    notes: list[str] = []
    out = checks.check_summarise(reply, [seg], notes)
    assert [(f.text, f.turns) for f in out.segments[0].facts] == [
        ("ok", [2]),
        ("bad", []),
        ("zero", []),
    ]
    assert len(notes) == 2 and "[3] of 1..2" in notes[0] and "whole segment" in notes[0]


def test_build_summaries_maps_lines_to_turn_ids_and_flags_the_fallback() -> None:
    seg = _segment("g", ["t1", "t2", "t3"])
    out = SegmentSummary(
        segment_id="g",
        facts=[
            FactItem(text="named", turns=[3, 1]),
            FactItem(text="bare"),
            FactItem(text="out of range", turns=[4]),
            FactItem(text="taken", turns=[2]),
        ],
    )
    out.sources = {"taken": FactSource(line=1, text="line t2")}
    with capture_events() as events:
        records = build_summaries("u", [seg], [out])
    got = [(r.text, r.source_turn_ids, r.attribution) for r in records]
    assert got == [
        ("named", ["t1", "t3"], Attribution.MODEL),
        ("bare", ["t1", "t2", "t3"], Attribution.SEGMENT),
        ("out of range", ["t1", "t2", "t3"], Attribution.SEGMENT),
        ("taken", ["t2"], Attribution.SOURCE),
    ]
    [event] = [e for e in events if e["event"] == "ingest.summaries_unattributed"]
    assert event["summaries"] == 2 and event["segment_ids"] == ["g"]


def test_extractive_facts_name_the_line_they_were_taken_from() -> None:
    seg = SegmentInput(
        segment_id="g",
        lines=[
            "[2023-05-08 13:56] Caroline: Hey Mel! Good to see you!",
            "[2023-05-08 13:58] Caroline: I went to a LGBTQ support group yesterday.",
            "[2023-05-08 13:59] Melanie: We went camping at the lake last weekend.",
        ],
        session_time=T0,
    )
    out = summarise_segment(seg)
    assert out.facts
    for fact in out.facts:
        assert fact.turns == [out.sources[fact.text].line + 1]
    records = build_summaries("u", [_segment("g", ["a", "b", "c"])], [out])
    assert {r.attribution for r in records} == {Attribution.SOURCE}
    assert [r.source_turn_ids for r in records] == [["b"], ["c"]]


def test_segments_are_shown_with_numbered_lines() -> None:
    text = format_segments([SegmentInput(segment_id="g", lines=["A: one", "B: two"])])
    assert "\n#1 A: one\n#2 B: two\n" in text


def test_a_merge_is_as_well_attributed_as_its_weakest_input() -> None:
    src = _summary("a", ["t1"], Attribution.SOURCE)
    model = _summary("b", ["t2"], Attribution.MODEL)
    whole = _summary("c", ["t1", "t2"], Attribution.SEGMENT)
    assert merged_attribution([src]) is Attribution.SOURCE
    assert merged_attribution([src, model]) is Attribution.MODEL
    assert merged_attribution([model, whole]) is Attribution.SEGMENT
