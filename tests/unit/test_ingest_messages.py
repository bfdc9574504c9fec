"""Validation and documented normalisation of add() calls."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.errors import InvalidMessageError, UserInputError
from hymem.write.messages import MAX_MESSAGE_CHARS, normalise_messages, normalise_text

T0 = datetime(2023, 5, 8, 13, 56)


def norm(msgs):
    return normalise_messages(msgs, default_time=T0)


def test_speaker_or_role_text_or_content_and_defaults() -> None:
    out = norm([{"role": " user ", "content": " hi there "}, {"speaker": "Bo", "text": "yo"}])
    assert [(m.speaker, m.text, m.timestamp, m.id) for m in out] == [
        ("user", "hi there", T0, None),
        ("Bo", "yo", T0, None),
    ]


def test_single_mapping_is_a_one_message_call() -> None:
    assert len(norm({"speaker": "a", "text": "b"})) == 1


def test_per_message_timestamp_overrides_call_time() -> None:
    out = norm([{"speaker": "a", "text": "b", "timestamp": "1:56 pm on 8 May, 2023"}])
    assert out[0].timestamp == datetime(2023, 5, 8, 13, 56)
    out = norm([{"speaker": "a", "text": "b", "timestamp": "2023-05-08T10:00:00+02:00"}])
    assert out[0].timestamp == datetime(2023, 5, 8, 8, 0)


def test_documented_normalisations() -> None:
    assert normalise_text("Cafe\u0301") == "Caf\u00e9"  # NFC
    assert normalise_text("a\x00b\x07c\x1b[0m\rd") == "abc[0md"  # controls gone
    assert normalise_text("line1\n\tline2") == "line1\n\tline2"  # \n and \t kept
    assert normalise_text("bad \ud800 surrogate") == "bad \ufffd surrogate"
    assert normalise_text("  \n trimmed \t ") == "trimmed"


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ({"speaker": "a", "text": "   "}, "empty"),
        ({"speaker": "a", "text": "\x00\x01"}, "empty"),
        ({"speaker": "a", "text": 42}, "must be a string"),
        ({"speaker": "a", "text": ["x"]}, "must be a string"),
        ({"text": "hello"}, "missing speaker"),
        ({"speaker": " ", "text": "hello"}, "speaker is empty"),
        ({"speaker": "a"}, "missing text"),
        ({"speaker": "a", "text": "x", "timestamp": "not a date"}, "unparseable"),
        ({"speaker": "a", "text": "x", "timestamp": "yesterday"}, "unparseable"),
        ({"speaker": "a", "text": "x", "timestamp": True}, "boolean"),
        ({"speaker": "a", "text": "x", "id": 7}, "id must be"),
        ("just a string", "mapping"),
    ],
)
def test_bad_messages_name_the_offending_index(message: object, reason: str) -> None:
    good = {"speaker": "a", "text": "fine", "id": "m0"}
    with pytest.raises(InvalidMessageError) as err:
        norm([good, message])
    assert err.value.index == 1
    assert reason in err.value.reason
    assert "message 1" in str(err.value)


def test_error_carries_the_message_id() -> None:
    with pytest.raises(InvalidMessageError) as err:
        norm([{"speaker": "a", "text": "", "id": "D1:3"}])
    assert err.value.message_id == "D1:3" and "D1:3" in str(err.value)


def test_one_megabyte_message_is_refused_with_the_documented_limit() -> None:
    with pytest.raises(InvalidMessageError) as err:
        norm([{"speaker": "a", "text": "x" * 1_048_576}])
    assert str(MAX_MESSAGE_CHARS) in err.value.reason
    assert (
        len(norm([{"speaker": "a", "text": "y" * MAX_MESSAGE_CHARS}])[0].text) == MAX_MESSAGE_CHARS
    )


def test_repeated_ids_collapse_when_identical_and_fail_when_conflicting() -> None:
    same = {"speaker": "a", "text": "x", "id": "1"}
    assert len(norm([same, dict(same)])) == 1
    with pytest.raises(InvalidMessageError) as err:
        norm([same, {"speaker": "a", "text": "other", "id": "1"}])
    assert err.value.index == 1


def test_call_level_errors() -> None:
    for bad in ([], b"text", None, 5):
        with pytest.raises(UserInputError):
            norm(bad)


def test_plain_string_is_one_user_message() -> None:
    (msg,) = norm("  I adopted a dog named Oscar.  ")
    assert (msg.speaker, msg.text, msg.timestamp, msg.id) == (
        "user",
        "I adopted a dog named Oscar.",
        T0,
        None,
    )


@pytest.mark.parametrize("blank", ["", "   ", "\n\t", "\x00"])
def test_blank_string_is_refused_like_a_blank_message(blank: str) -> None:
    with pytest.raises(UserInputError, match="empty"):
        norm(blank)


def test_ten_thousand_messages_validate_quickly() -> None:
    out = norm([{"speaker": "a", "text": f"turn {i}"} for i in range(10_000)])
    assert len(out) == 10_000
