"""Reading backfill histories from JSON Lines: grouping, field aliases, and bad lines named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hymem.backfill.histories import read_jsonl
from hymem.core.errors import UserInputError


def _write(tmp_path: Path, rows: list[object]) -> Path:
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return path


def test_messages_group_by_user_then_session_in_file_order(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"user_id": "a", "session_id": "s2", "text": "one", "speaker": "user"},
            {"user_id": "b", "text": "two", "role": "assistant", "id": "m2"},
            {"user_id": "a", "session_id": "s1", "content": "three", "timestamp": "2024-01-01"},
            {"user_id": "a", "session_id": "s2", "text": "four"},
        ],
    )
    found = {h.user_id: h for h in read_jsonl(path)}
    assert [s.session_id for s in found["a"].sessions] == ["s2", "s1"]
    assert [m["text"] for m in found["a"].sessions[0].messages] == ["one", "four"]
    assert found["a"].sessions[1].messages == [{"text": "three", "timestamp": "2024-01-01"}]
    assert found["b"].sessions[0].session_id == "default"
    assert found["b"].sessions[0].messages == [{"text": "two", "speaker": "assistant", "id": "m2"}]
    assert found["a"].turn_count == 3


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ({"text": "no user"}, "user_id"),
        ({"user_id": "a"}, "text"),
        ({"user_id": "a", "text": "x", "session_id": ""}, "session_id"),
        (["not", "an", "object"], "JSON object"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, row: object, needle: str) -> None:
    path = _write(tmp_path, [{"user_id": "a", "text": "fine"}, row])
    with pytest.raises(UserInputError, match=rf"line 2: .*{needle}"):
        read_jsonl(path)


def test_broken_json_and_bytes_that_are_not_utf8_are_user_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"user_id": "a", "text": "ok"}\n{oops\n', encoding="utf-8")
    with pytest.raises(UserInputError, match="line 2: not JSON"):
        read_jsonl(path)
    path.write_bytes(b'{"user_id": "a", "text": "\xff"}\n')
    with pytest.raises(UserInputError, match="not UTF-8"):
        read_jsonl(path)
    with pytest.raises(UserInputError, match="cannot read"):
        read_jsonl(tmp_path / "missing.jsonl")
