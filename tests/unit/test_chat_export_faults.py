"""Chat exports that are broken, hostile or merely unusual: each is read whole or refused with a
`ChatExportError` naming the conversation (or line) and the field, never a raw Python error,
never a hang; messages without ids get ids of their own, and no message is dropped silently.
The parser is fuzzed with arbitrary JSON and with valid exports one value of which was replaced.
"""

from __future__ import annotations

import copy
import json
import math
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hymem.core.errors import ChatExportError
from hymem.imports import chat_formats
from hymem.imports.chat_formats import ChatExport, read_chat_export
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.chat_exports import (
    chatgpt_export,
    claude_conversation,
    claude_export,
    gpt_conversation,
    jsonl_export,
    write_json,
    write_jsonl,
)

Refused = ChatExportError


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail, rather than hang the suite, when the block runs longer than `seconds`."""

    def fire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _turns(export: ChatExport) -> list[tuple[str, str, str, str]]:
    return [
        (s.session_id, m["id"], m["speaker"], m["text"])
        for s in export.history.sessions
        for m in s.messages
    ]


def _read(path: Path, fmt: str) -> ChatExport:
    with deadline(20):
        return read_chat_export(path, fmt, "ann")


# --- the tree ------------------------------------------------------------------------------
def test_chatgpt_children_that_loop_are_refused_not_followed_forever(tmp_path: Path) -> None:
    conv = gpt_conversation("c1", ["a", "b", "c"])
    del conv["current_node"]  # the reader follows each node's last child from the root
    conv["mapping"]["c1-n2"]["children"] = ["c1-n1"]  # n1 -> n2 -> n1 -> ...
    path = write_json(tmp_path / "loop.json", [conv])
    with pytest.raises(Refused, match=r"conversation 0 \('c1'\).*loops"):
        _read(path, "chatgpt")


def test_a_chatgpt_tree_without_a_root_is_refused(tmp_path: Path) -> None:
    conv = gpt_conversation("c1", ["a", "b"])
    del conv["current_node"]
    conv["mapping"]["c1-root"]["parent"] = "c1-n1"  # every node has a parent: a ring
    path = write_json(tmp_path / "ring.json", [conv])
    with pytest.raises(Refused, match=r"conversation 0 \('c1'\).*root"):
        _read(path, "chatgpt")


def test_a_claude_parent_chain_that_loops_is_refused(tmp_path: Path) -> None:
    conv = claude_conversation("k1", ["a", "b"])
    conv["chat_messages"][0]["parent_message_uuid"] = "k1-m1"
    conv["chat_messages"][1]["parent_message_uuid"] = "k1-m0"
    conv["current_leaf_message_uuid"] = "k1-m1"
    path = write_json(tmp_path / "loop.json", [conv])
    with pytest.raises(Refused, match=r"conversation 0 \('k1'\).*loops"):
        _read(path, "claude")


@pytest.mark.parametrize("fmt", ["chatgpt", "claude", "jsonl"])
def test_a_file_nested_100000_deep_is_refused_by_name(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(Refused, match="nested too deeply"):
        _read(path, fmt)


def test_depth_deep_inside_a_conversation_is_refused_too(tmp_path: Path) -> None:
    conv = gpt_conversation("c1", ["a"])
    body = json.dumps([conv]).replace(
        '"metadata": {}', '"metadata": ' + "[" * 50_000 + "]" * 50_000, 1
    )
    path = tmp_path / "deep.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(Refused, match="nested too deeply"):
        _read(path, "chatgpt")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = chatgpt_export(tmp_path / "c.json")
    monkeypatch.setattr(chat_formats, "MAX_EXPORT_BYTES", 1_000)
    with pytest.raises(Refused, match="limit is 1,000 bytes"):
        _read(path, "chatgpt")


# --- timestamps ----------------------------------------------------------------------------
def test_epoch_milliseconds_are_read_as_milliseconds(tmp_path: Path) -> None:
    conv = gpt_conversation("c1", ["hello"], t=1_700_000_000_123)  # ms
    path = write_json(tmp_path / "ms.json", [conv])
    export = _read(path, "chatgpt")
    session = export.history.sessions[0]
    assert session.timestamp == "2023-11-14T22:13:20.123000"
    assert session.messages[0]["timestamp"] == "2023-11-14T22:13:20.123000"
    rows = [{"text": "hi", "timestamp": 1_700_000_000_000}, {"text": "yo", "timestamp": 1.7e9}]
    export = _read(write_jsonl(tmp_path / "ms.jsonl", rows), "jsonl")
    stamps = [m["timestamp"] for m in export.history.sessions[0].messages]
    assert stamps == ["2023-11-14T22:13:20", "2023-11-14T22:13:20"]


BAD_TIMES: list[Any] = [
    math.nan,
    math.inf,
    1e300,
    -1e18,
    -1,
    10**40,
    253_402_300_800_000,  # milliseconds of the year 10000
    True,
    [1],
    {"t": 1},
    "yesterday",
    "1969-07-20T20:17:00Z",
    "2024-13-01",
]


def _gpt_message_time(value: Any) -> tuple[str, list[Any]]:
    conv = gpt_conversation("c1", ["hello", "hi"])
    conv["mapping"]["c1-n1"]["message"]["create_time"] = value
    return "chatgpt", [gpt_conversation("c0", ["first"]), conv]


def _gpt_conversation_time(value: Any) -> tuple[str, list[Any]]:
    conv = gpt_conversation("c1", ["hello", "hi"])
    conv["create_time"] = value
    return "chatgpt", [gpt_conversation("c0", ["first"]), conv]


def _claude_message_time(value: Any) -> tuple[str, list[Any]]:
    conv = claude_conversation("c1", ["hello", "hi"])
    conv["chat_messages"][1]["created_at"] = value
    return "claude", [claude_conversation("c0", ["first"]), conv]


def _claude_conversation_time(value: Any) -> tuple[str, list[Any]]:
    conv = claude_conversation("c1", ["hello", "hi"])
    conv["created_at"] = value
    return "claude", [claude_conversation("c0", ["first"]), conv]


def _jsonl_time(value: Any) -> tuple[str, list[Any]]:
    rows = [{"conversation_id": "c0", "id": "a", "text": "first"}]
    return "jsonl", [*rows, {"conversation_id": "c1", "id": "b", "text": "hi", "timestamp": value}]


TIME_FIELDS: dict[str, tuple[Callable[[Any], tuple[str, list[Any]]], str]] = {
    "chatgpt-message": (_gpt_message_time, r"conversation 1 \('c1'\).*create_time"),
    "chatgpt-conversation": (_gpt_conversation_time, r"conversation 1 \('c1'\).*create_time"),
    "claude-message": (_claude_message_time, r"conversation 1 \('c1'\).*created_at"),
    "claude-conversation": (_claude_conversation_time, r"conversation 1 \('c1'\).*created_at"),
    "jsonl": (_jsonl_time, r"line 2: timestamp"),
}


@pytest.mark.parametrize("value", BAD_TIMES, ids=repr)
@pytest.mark.parametrize("field", list(TIME_FIELDS))
def test_a_timestamp_out_of_range_or_of_the_wrong_type_names_its_field(
    tmp_path: Path, field: str, value: Any
) -> None:
    build, needle = TIME_FIELDS[field]
    fmt, data = build(value)
    if fmt == "jsonl":
        path = write_jsonl(tmp_path / "t.jsonl", data)
    else:
        path = write_json(tmp_path / "t.json", data)
    with pytest.raises(Refused, match=needle):
        _read(path, fmt)


# --- JSON types ----------------------------------------------------------------------------
def _gpt(mutate: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def write(path: Path) -> Path:
        conv = gpt_conversation("c1", ["hello", "hi"])
        mutate(conv)
        return write_json(path, [gpt_conversation("c0", ["first"]), conv])

    return write


def _claude(mutate: Callable[[dict[str, Any]], None]) -> Callable[[Path], Path]:
    def write(path: Path) -> Path:
        conv = claude_conversation("c1", ["hello", "hi"])
        mutate(conv)
        return write_json(path, [claude_conversation("c0", ["first"]), conv])

    return write


def _jsonl(**row: Any) -> Callable[[Path], Path]:
    def write(path: Path) -> Path:
        base = {"conversation_id": "c1", "id": "j2", "role": "user", "text": "hi"}
        return write_jsonl(path, [{"id": "j1", "text": "first"}, {**base, **row}])

    return write


def _set(*keys: str | int, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(conv: dict[str, Any]) -> None:
        target: Any = conv
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return mutate


N1 = ("mapping", "c1-n1")
WRONG_TYPES: dict[str, tuple[str, Callable[[Path], Path], str]] = {
    "gpt-message-list": ("chatgpt", _gpt(_set(*N1, "message", value=["x"])), "message"),
    "gpt-message-str": ("chatgpt", _gpt(_set(*N1, "message", value="x")), "message"),
    "gpt-message-int": ("chatgpt", _gpt(_set(*N1, "message", value=5)), "message"),
    "gpt-author-str": ("chatgpt", _gpt(_set(*N1, "message", "author", value="user")), "author"),
    "gpt-role-int": ("chatgpt", _gpt(_set(*N1, "message", "author", "role", value=5)), "role"),
    "gpt-content-str": ("chatgpt", _gpt(_set(*N1, "message", "content", value="hi")), "content"),
    "gpt-content-list": (
        "chatgpt",
        _gpt(_set(*N1, "message", "content", value=["hi"])),
        "content",
    ),
    "gpt-parts-str": (
        "chatgpt",
        _gpt(_set(*N1, "message", "content", "parts", value="hi")),
        "parts",
    ),
    "gpt-metadata-str": ("chatgpt", _gpt(_set(*N1, "message", "metadata", value="x")), "metadata"),
    "gpt-metadata-list": (
        "chatgpt",
        _gpt(_set(*N1, "message", "metadata", value=[1])),
        "metadata",
    ),
    "gpt-weight-str": ("chatgpt", _gpt(_set(*N1, "message", "weight", value="heavy")), "weight"),
    "gpt-id-dict": ("chatgpt", _gpt(_set(*N1, "message", "id", value={"a": 1})), "id"),
    "gpt-children-str": ("chatgpt", _gpt(_set(*N1, "children", value="c1-n0")), "children"),
    "gpt-parent-int": ("chatgpt", _gpt(_set(*N1, "parent", value=5)), "parent"),
    "gpt-node-str": ("chatgpt", _gpt(_set(*N1, value="x")), "c1-n1"),
    "gpt-mapping-list": ("chatgpt", _gpt(_set("mapping", value=[])), "mapping"),
    "gpt-current-node-int": ("chatgpt", _gpt(_set("current_node", value=5)), "current_node"),
    "gpt-conversation-id-list": (
        "chatgpt",
        _gpt(_set("conversation_id", value=[5])),
        "conversation_id",
    ),
    "claude-message-str": ("claude", _claude(_set("chat_messages", 1, value="x")), "chat_messages"),
    "claude-text-int": ("claude", _claude(_set("chat_messages", 1, "text", value=5)), "text"),
    "claude-sender-int": (
        "claude",
        _claude(_set("chat_messages", 1, "sender", value=5)),
        "sender",
    ),
    "claude-content-str": (
        "claude",
        _claude(_set("chat_messages", 1, "content", value="x")),
        "content",
    ),
    "claude-content-item-str": (
        "claude",
        _claude(_set("chat_messages", 1, "content", value=["x"])),
        "content",
    ),
    "claude-attachments-str": (
        "claude",
        _claude(_set("chat_messages", 1, "attachments", value="x")),
        "attachments",
    ),
    "claude-attachment-str": (
        "claude",
        _claude(_set("chat_messages", 1, "attachments", value=["x"])),
        "attachments",
    ),
    "claude-extracted-int": (
        "claude",
        _claude(_set("chat_messages", 1, "attachments", value=[{"extracted_content": 5}])),
        "extracted_content",
    ),
    "claude-files-str": (
        "claude",
        _claude(_set("chat_messages", 1, "files", value="photo.jpg")),
        "files",
    ),
    "claude-uuid-list": ("claude", _claude(_set("chat_messages", 1, "uuid", value=[1])), "uuid"),
    "claude-parent-int": (
        "claude",
        _claude(_set("chat_messages", 1, "parent_message_uuid", value=5)),
        "parent_message_uuid",
    ),
    "claude-leaf-int": ("claude", _claude(_set("current_leaf_message_uuid", value=5)), "leaf"),
    "claude-messages-dict": ("claude", _claude(_set("chat_messages", value={})), "chat_messages"),
    "jsonl-role-int": ("jsonl", _jsonl(role=5), "role"),
    "jsonl-speaker-list": ("jsonl", _jsonl(speaker=["x"]), "speaker"),
    "jsonl-session-dict": ("jsonl", _jsonl(session_id={"a": 1}), "session_id"),
    "jsonl-id-list": ("jsonl", _jsonl(id=[1]), "id"),
    "jsonl-user-int": ("jsonl", _jsonl(user_id=5), "user_id"),
    "jsonl-content-list": ("jsonl", _jsonl(text=None, content=[{"type": "text"}]), "content"),
}


@pytest.mark.parametrize("case", list(WRONG_TYPES))
def test_a_value_of_the_wrong_json_type_names_its_conversation_and_field(
    tmp_path: Path, case: str
) -> None:
    fmt, write, field = WRONG_TYPES[case]
    path = write(tmp_path / "f.json")
    where = r"line 2" if fmt == "jsonl" else r"conversation 1 \('c1'\)"
    with pytest.raises(Refused, match=f"{where}.*{field}"):
        _read(path, fmt)


# --- ids -----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["chatgpt", "claude"])
def test_messages_without_ids_get_ids_of_their_conversation(tmp_path: Path, fmt: str) -> None:
    make = gpt_conversation if fmt == "chatgpt" else claude_conversation
    convs = [make("c1", ["one", "two", "three"], ids=False), make("c2", ["four"], ids=False)]
    path = write_json(tmp_path / "f.json", convs)
    first, again = _turns(_read(path, fmt)), _turns(_read(path, fmt))
    assert first == again  # the same ids every time: a re-import stores nothing twice
    assert [t[3] for t in first] == ["one", "two", "three", "four"]
    ids = [t[1] for t in first]
    assert len(set(ids)) == 4 and all(i.startswith(("c1#", "c2#")) for i in ids), ids


def test_jsonl_messages_without_ids_get_ids_of_their_session(tmp_path: Path) -> None:
    rows = [
        {"conversation_id": "s1", "text": "one"},
        {"conversation_id": "s2", "text": "two"},
        {"conversation_id": "s1", "text": "three", "id": ""},
    ]
    turns = _turns(_read(write_jsonl(tmp_path / "f.jsonl", rows), "jsonl"))
    assert [(t[0], t[1], t[3]) for t in turns] == [
        ("s1", "s1#1", "one"),
        ("s1", "s1#2", "three"),
        ("s2", "s2#1", "two"),
    ]


def test_the_same_id_in_two_conversations_with_other_text_is_refused(tmp_path: Path) -> None:
    c1 = gpt_conversation("c1", ["hello", "hi"])
    c2 = gpt_conversation("c1", ["something else", "entirely"])  # the same node and message ids
    c2["id"] = "c2"
    path = write_json(tmp_path / "f.json", [c1, c2])
    with pytest.raises(Refused, match=r"conversation 1 \('c2'\).*'c1-n0'.*conversation 0"):
        _read(path, "chatgpt")
    rows = [
        {"conversation_id": "a", "id": "1", "text": "one"},
        {"conversation_id": "b", "id": "1", "text": "another"},
    ]
    with pytest.raises(Refused, match=r"line 2: id '1'.*line 1"):
        _read(write_jsonl(tmp_path / "f.jsonl", rows), "jsonl")


def test_the_same_message_in_two_conversations_is_kept_once_and_counted(tmp_path: Path) -> None:
    c1 = gpt_conversation("c1", ["hello", "hi"])
    c2 = copy.deepcopy(c1)
    c2["id"] = "c2"
    export = _read(write_json(tmp_path / "f.json", [c1, c2]), "chatgpt")
    assert [t[1] for t in _turns(export)] == ["c1-n0", "c1-n1"]
    assert export.skipped["repeated_id"] == 2


# --- messages add() would refuse, and what the README calls optional ----------------------
def test_a_message_over_the_limit_is_refused_while_reading(tmp_path: Path) -> None:
    convs = [gpt_conversation("c0", ["fine"]), gpt_conversation("c1", ["x" * 70_000])]
    path = write_json(tmp_path / "f.json", convs)
    with pytest.raises(Refused, match=r"conversation 1 \('c1'\).*'c1-n0'.*65536"):
        _read(path, "chatgpt")


def test_a_text_of_control_characters_only_is_counted_empty(tmp_path: Path) -> None:
    path = write_json(tmp_path / "f.json", [gpt_conversation("c1", ["hello", "\x00\x1b\x07"])])
    export = _read(path, "chatgpt")
    assert [t[3] for t in _turns(export)] == ["hello"]
    assert export.skipped["empty"] == 1


def test_jsonl_lines_without_speaker_are_the_users(tmp_path: Path) -> None:
    rows = [{"text": "I row."}, {"text": "Noted.", "role": "assistant"}]
    turns = _turns(_read(write_jsonl(tmp_path / "f.jsonl", rows), "jsonl"))
    assert [(t[2], t[3]) for t in turns] == [("user", "I row."), ("assistant", "Noted.")]


def test_jsonl_text_may_hold_line_separators_and_crlf_line_ends(tmp_path: Path) -> None:
    rows = [{"text": "one\u2028two\u2029three", "id": "a"}, {"text": "four", "id": "b"}]
    path = tmp_path / "f.jsonl"
    body = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    path.write_text(body, encoding="utf-8", newline="")
    turns = _turns(_read(path, "jsonl"))
    assert [(t[1], t[3]) for t in turns] == [("a", "one\u2028two\u2029three"), ("b", "four")]


def test_a_conversation_id_add_would_refuse_is_refused_while_reading(tmp_path: Path) -> None:
    conv = gpt_conversation("c1", ["hello"])
    conv["id"] = "c" * 300
    with pytest.raises(Refused, match=r"conversation 0.*256"):
        _read(write_json(tmp_path / "f.json", [conv]), "chatgpt")


# --- fuzzing -------------------------------------------------------------------------------
FIELDS = [
    *("id", "conversation_id", "mapping", "current_node", "create_time", "message", "parent"),
    *("children", "author", "role", "content", "parts", "text", "weight", "metadata", "uuid"),
    *("chat_messages", "sender", "created_at", "parent_message_uuid", "attachments", "files"),
    *("current_leaf_message_uuid", "extracted_content", "speaker", "timestamp", "session_id"),
]
KEYS = st.sampled_from(FIELDS) | st.text(max_size=8)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["user", "assistant", "human", "system", "c1", "c1-n0", "c1-n1"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=24,
)
FUZZ = settings(
    max_examples=150,
    derandomize=True,
    deadline=timedelta(seconds=5),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _read_or_refuse(path: Path, fmt: str) -> None:
    """Read `path`: a refusal must be the typed error; an export read must be add()-ready."""
    try:
        export = _read(path, fmt)
    except ChatExportError:
        return
    ids = [m["id"] for s in export.history.sessions for m in s.messages]
    assert len(ids) == len(set(ids))
    for session in export.history.sessions:
        assert session.messages
        for m in session.messages:
            assert isinstance(m["id"], str) and m["id"].strip()
            assert isinstance(m["speaker"], str) and m["speaker"].strip()
            assert isinstance(m["text"], str) and m["text"].strip()


ROLE = st.sampled_from(["user", "assistant", "human", "system", "tool"]) | JSON
TEXT = st.sampled_from(["hi", "", " ", "\x00", "x" * 70_000]) | JSON
NODE_KEY = st.sampled_from(["c1-n0", "c1-n1", "r"])


def _maybe(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects holding any of `fields` (each its own strategy, or any JSON instead)."""
    return st.fixed_dictionaries({}, optional={k: v | JSON for k, v in fields.items()})


# The formats' shapes with any JSON anywhere, so arbitrary values reach every field read.
GPT_MESSAGE = _maybe(
    id=NODE_KEY,
    author=_maybe(role=ROLE),
    content=_maybe(parts=st.lists(TEXT, max_size=3), text=TEXT),
    create_time=st.floats() | st.integers(),
    weight=st.sampled_from([0, 1.0]),
    metadata=_maybe(is_visually_hidden_from_conversation=st.booleans()),
)
GPT_NODE = _maybe(message=GPT_MESSAGE, parent=NODE_KEY, children=st.lists(NODE_KEY, max_size=2))
GPT_CONVERSATION = _maybe(
    id=st.sampled_from(["c1", "c2"]),
    mapping=st.dictionaries(NODE_KEY, GPT_NODE, max_size=3),
    current_node=NODE_KEY,
    create_time=st.floats(),
)
CLAUDE_MESSAGE = _maybe(
    uuid=NODE_KEY,
    sender=ROLE,
    text=TEXT,
    content=st.lists(_maybe(text=TEXT), max_size=2),
    created_at=st.text(max_size=25) | st.floats(),
    parent_message_uuid=NODE_KEY,
    attachments=st.lists(_maybe(file_name=TEXT, extracted_content=TEXT), max_size=2),
    files=st.lists(JSON, max_size=2),
)
CLAUDE_CONVERSATION = _maybe(
    uuid=st.sampled_from(["c1", "c2"]),
    chat_messages=st.lists(CLAUDE_MESSAGE, max_size=3),
    current_leaf_message_uuid=NODE_KEY,
    created_at=st.text(max_size=25),
)
JSONL_ROW = _maybe(
    id=NODE_KEY,
    text=TEXT,
    content=TEXT,
    role=ROLE,
    speaker=ROLE,
    timestamp=st.floats() | st.integers() | st.text(max_size=25),
    conversation_id=st.sampled_from(["c1", "c2"]),
    user_id=st.sampled_from(["ann", "bob"]),
)
SHAPED = {
    "chatgpt": st.lists(GPT_CONVERSATION, max_size=3),
    "claude": st.lists(CLAUDE_CONVERSATION, max_size=3),
    "jsonl": st.lists(JSONL_ROW, max_size=4),
}


@FUZZ
@given(data=st.data(), fmt=st.sampled_from(["chatgpt", "claude", "jsonl"]))
def test_an_export_shaped_file_of_any_values_is_read_or_refused(
    tmp_path: Path, data: st.DataObject, fmt: str
) -> None:
    value = data.draw(SHAPED[fmt], label="export")
    path = tmp_path / "fuzz.json"
    if fmt == "jsonl":
        path.write_text("\n".join(json.dumps(v) for v in value), encoding="utf-8")
    else:
        path.write_text(json.dumps(value), encoding="utf-8")
    _read_or_refuse(path, fmt)


@FUZZ
@given(value=JSON, fmt=st.sampled_from(["chatgpt", "claude", "jsonl"]))
def test_any_json_is_read_or_refused_with_the_typed_error(
    tmp_path: Path, value: Any, fmt: str
) -> None:
    path = tmp_path / "fuzz.json"
    if fmt == "jsonl" and isinstance(value, list):
        path.write_text("\n".join(json.dumps(v) for v in value), encoding="utf-8")
    else:
        path.write_text(json.dumps(value), encoding="utf-8")
    _read_or_refuse(path, fmt)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


def _valid(fmt: str, folder: Path) -> Any:
    if fmt == "jsonl":
        return [
            json.loads(line) for line in jsonl_export(folder / "v.jsonl").read_text().splitlines()
        ]
    write = chatgpt_export if fmt == "chatgpt" else claude_export
    return json.loads(write(folder / "v.json").read_text())


@FUZZ
@given(data=st.data(), fmt=st.sampled_from(["chatgpt", "claude", "jsonl"]))
def test_a_valid_export_with_one_value_replaced_is_read_or_refused(
    tmp_path: Path, data: st.DataObject, fmt: str
) -> None:
    export = _valid(fmt, tmp_path)
    where = data.draw(st.sampled_from(_paths(export)[1:]), label="where")
    target = export
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = data.draw(JSON, label="value")
    path = tmp_path / "fuzz.json"
    if fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in export), encoding="utf-8")
    else:
        path.write_text(json.dumps(export), encoding="utf-8")
    _read_or_refuse(path, fmt)
