"""The LoCoMo loader on the repository's small fixture and on malformed input."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hymem.backfill.locomo import (
    LocomoTurn,
    conversation_messages,
    load_locomo,
    parse_locomo,
)
from hymem.core.errors import UserInputError

from tests.fixtures_ingest import LOCOMO_MINI


def test_fixture_loads_with_sessions_in_numeric_order() -> None:
    convs = load_locomo(LOCOMO_MINI)
    assert [c.sample_id for c in convs] == ["conv-mini-1", "conv-mini-2"]
    first = convs[0]
    assert (first.speaker_a, first.speaker_b) == ("Caroline", "Melanie")
    assert [s.session_id for s in first.sessions] == ["session_1", "session_2", "session_3"]
    assert first.sessions[0].date_time == datetime(2023, 5, 8, 13, 56)
    assert first.turn_count == 30
    assert {q.category for c in convs for q in c.qa} == {1, 2, 3, 4, 5}


def test_qa_answers_are_strings_and_category_5_uses_the_adversarial_answer() -> None:
    convs = load_locomo(LOCOMO_MINI)
    by_q = {q.question: q for c in convs for q in c.qa}
    assert by_q["When is the studio's grand opening?"].answer == "20"
    adversarial = by_q["What did Melanie realize after the charity race?"]
    assert adversarial.category == 5 and adversarial.answer == "self-care is important"
    assert by_q["What did Melanie paint?"].evidence == ["D1:10", "D1:8"]


def test_image_turns_render_their_caption_once() -> None:
    turn = load_locomo(LOCOMO_MINI)[0].sessions[0].turns[7]
    assert turn.img_url == "https://example.invalid/lake.jpg"
    assert turn.render_text().endswith("[shares a photo of a painting of a sunset over a lake]")
    assert LocomoTurn(dia_id="x", speaker="a", text="hi").render_text() == "hi"


def test_annotations_are_never_loaded() -> None:
    dumped = load_locomo(LOCOMO_MINI)[0].model_dump_json()
    assert "observation" not in dumped and "session_summary" not in dumped
    assert "Caroline attended a support group." not in dumped


def test_sessions_sort_numerically_not_lexically() -> None:
    raw = {
        "sample_id": "c",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_10": [{"speaker": "A", "dia_id": "D10:1", "text": "ten"}],
            "session_10_date_time": "1:00 pm on 2 May, 2023",
            "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "two"}],
            "session_2_date_time": "1:00 pm on 1 May, 2023",
        },
        "qa": [],
    }
    conv = parse_locomo([raw])[0]
    assert [s.index for s in conv.sessions] == [2, 10]


def test_conversation_messages_are_add_ready() -> None:
    conv = load_locomo(LOCOMO_MINI)[1]
    batches = list(conversation_messages(conv))
    assert [b[0] for b in batches] == ["session_1", "session_2"]
    _, when, msgs = batches[0]
    assert when == datetime(2023, 1, 20, 16, 4)
    assert msgs[0] == {
        "speaker": "Jon",
        "text": "Hi Gina, long time no see! I lost my job at the bank last week.",
        "id": "D1:1",
        "timestamp": when,
    }


def test_malformed_files_raise_user_input_errors(tmp_path: Path) -> None:
    with pytest.raises(UserInputError):
        load_locomo(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserInputError):
        load_locomo(bad)
    bad.write_text(json.dumps({"a": 1}))
    with pytest.raises(UserInputError):
        load_locomo(bad)
    bad.write_text(json.dumps([{"sample_id": "x", "conversation": {"speaker_a": "A"}}]))
    with pytest.raises(UserInputError, match="x"):
        load_locomo(bad)
