"""Reading chat exports: the branch the user ended on, ids kept, and everything that is not a
turn counted by reason; a broken file is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem.core.errors import UserInputError
from hymem.imports.chat_formats import read_chat_export

from tests.chat_exports import chatgpt_export, claude_export, jsonl_export


def _turns(export: object) -> list[tuple[str, str, str, str]]:
    history = export.history  # type: ignore[attr-defined]  # ChatExport, read loosely
    return [
        (s.session_id, m["id"], m["speaker"], m["text"])
        for s in history.sessions
        for m in s.messages
    ]


def test_chatgpt_reads_the_current_branch_and_counts_the_rest(tmp_path: Path) -> None:
    export = read_chat_export(chatgpt_export(tmp_path / "c.json"), "chatgpt", "ann")
    assert _turns(export) == [
        ("conv-1", "u1", "user", "My sourdough starter is called Clint and lives in the fridge."),
        ("conv-1", "a1", "assistant", "Feed Clint weekly."),
        ("conv-1", "u2", "user", "Thanks!"),
        ("conv-2", "m1", "user", "I fly to Oslo in May."),
        ("conv-2", "m2", "assistant", "Pack a raincoat."),
    ]
    assert dict(export.skipped) == {
        "other_branch": 2,
        "role_system": 1,
        "hidden": 1,
        "attachment_absent": 1,
        "empty": 1,
    }
    first = export.history.sessions[0].messages[0]
    assert first["timestamp"] == "1970-01-01T00:00:05"  # the message's own create_time


def test_claude_reads_the_current_branch_and_attached_text(tmp_path: Path) -> None:
    export = read_chat_export(claude_export(tmp_path / "c.json"), "claude", "ann")
    turns = _turns(export)
    assert [t[1] for t in turns] == ["m1", "m3", "f1"]
    assert turns[0][3].startswith("I grow tomatoes") and "Row 1: Ruby" in turns[0][3]
    assert turns[1][3] == "Water Ruby every morning."  # from the content blocks
    assert dict(export.skipped) == {"other_branch": 1, "attachment_absent": 1, "empty": 1}


def test_jsonl_groups_by_conversation(tmp_path: Path) -> None:
    export = read_chat_export(jsonl_export(tmp_path / "c.jsonl"), "jsonl", "ann")
    assert [(t[0], t[1]) for t in _turns(export)] == [("j1", "j1-1"), ("j2", "j2-1")]
    assert dict(export.skipped) == {"role_system": 1, "empty": 1}


@pytest.mark.parametrize("fmt", ["chatgpt", "claude", "jsonl"])
def test_bytes_that_are_not_utf8_are_a_clear_error(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'[{"id": "x", "title": "caf\xe9"}]')
    with pytest.raises(UserInputError, match="not UTF-8"):
        read_chat_export(path, fmt, "ann")


@pytest.mark.parametrize(
    ("fmt", "body", "needle"),
    [
        ("chatgpt", "{not json", "not JSON"),
        ("chatgpt", '{"a": 1}', "list of conversations"),
        ("chatgpt", '[{"id": "c"}]', "mapping: missing"),
        ("claude", '[{"uuid": "c"}]', "chat_messages: missing"),
        ("jsonl", '{"user_id": "bob", "text": "hi"}', "is not 'ann'"),
        ("jsonl", '{"text": 5}', "text: input should be a valid string"),
        ("jsonl", '{"role": "user"}', "needs a string text"),
        ("xml", "[]", "unknown chat export format"),
    ],
)
def test_a_file_of_the_wrong_shape_names_what_is_wrong(
    tmp_path: Path, fmt: str, body: str, needle: str
) -> None:
    path = tmp_path / "f.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(UserInputError, match=needle):
        read_chat_export(path, fmt, "ann")


def test_a_chatgpt_tree_that_loops_is_an_error_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "loop.json"
    path.write_text(
        '[{"id": "c", "current_node": "a", "mapping": {'
        '"a": {"parent": "b", "message": {"id": "a", "author": {"role": "user"},'
        ' "content": {"parts": ["x"]}}}, "b": {"parent": "a", "message": null}}}]',
        encoding="utf-8",
    )
    with pytest.raises(UserInputError, match="loops"):
        read_chat_export(path, "chatgpt", "ann")
