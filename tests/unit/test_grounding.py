"""A summariser's fact must come from its own segment: the pure test behind the write path's
per-segment fallback (`hymem.write.grounding`)."""

from __future__ import annotations

from hymem.llm.roles import SegmentInput, SummariseOutput
from hymem.write.grounding import ground, grounded, speaker_words

TABLE_TENNIS = [
    "[2023-02-26 14:08] assistant: Batch cooking is a lifesaver.",
    "[2023-02-26 14:09] Toby: My favourite sport is table tennis, I play every Tuesday.",
]


def test_a_sentence_from_another_segment_is_not_grounded() -> None:
    assert not grounded("Lentils are so versatile.", TABLE_TENNIS)
    assert not grounded("Noted, and congratulations on keeping it all going.", TABLE_TENNIS)


def test_a_rewording_or_a_copy_of_its_own_line_is_grounded() -> None:
    assert grounded("Toby plays table tennis every Tuesday.", TABLE_TENNIS)
    assert grounded("Toby: My favourite sport is table tennis.", TABLE_TENNIS)
    assert grounded("Batch cooking saves time.", TABLE_TENNIS)


def test_the_speakers_name_alone_does_not_ground_a_fact() -> None:
    assert speaker_words(TABLE_TENNIS) == {"assistant", "toby"}
    assert not grounded("Toby loves pottery.", TABLE_TENNIS)
    assert grounded("Toby is here.", TABLE_TENNIS)  # no word of its own to check


def test_numbers_and_resolved_dates_count_as_words() -> None:
    lines = ["[2023-05-08 13:56] Ann: I have 3 cats since yesterday [7 May 2023]."]
    assert grounded("Ann has 3 pets.", lines)
    assert grounded("Since 7 May 2023.", lines)


def test_ground_drops_stray_facts_and_names_segments_left_with_none() -> None:
    segments = [
        SegmentInput(segment_id="a", lines=["[2023-02-26 14:04] Toby: Lentils are versatile."]),
        SegmentInput(segment_id="b", lines=TABLE_TENNIS),
        SegmentInput(segment_id="c", lines=["[2023-02-26 14:30] Toby: Hello again!"]),
    ]
    reply = SummariseOutput.model_validate(
        {
            "segments": [
                {"segment_id": "a", "facts": ["Lentils are so versatile."]},
                {
                    "segment_id": "b",
                    "facts": ["Lentils are so versatile.", "Toby plays table tennis."],
                },
                {"segment_id": "c", "facts": ["Lentils are so versatile."]},
            ]
        }
    )
    checked = ground(segments, reply)
    assert [[f.text for f in s.facts] for s in checked.output.segments] == [
        ["Lentils are so versatile."],
        ["Toby plays table tennis."],
        [],
    ]
    assert checked.ungrounded == ["c"] and checked.dropped == 2
    assert [len(s.facts) for s in reply.segments] == [1, 2, 1]  # the reply itself is untouched


def test_a_segment_the_model_left_empty_is_not_a_fallback() -> None:
    segments = [SegmentInput(segment_id="a", lines=["[2023-02-26 14:00] Toby: Hello again!"])]
    reply = SummariseOutput.model_validate({"segments": [{"segment_id": "a", "facts": []}]})
    assert ground(segments, reply).ungrounded == []
