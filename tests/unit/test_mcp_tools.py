"""The MCP tools without a subprocess: the SDK's client connected in-process to a server over a
small stand-in for Memory, so each error class and argument path is checked in milliseconds.
The real command over both transports is tests/integration/test_mcp_server.py."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hymem.core.errors import LLMUnavailable, NotFoundError, StoreLockedError, UserInputError
from hymem.core.types import AddResult, RoleUsage, Usage
from hymem.serve.mcp_server import TOOL_NAMES, added_then_flushed, build_mcp_server, tool_error
from mcp import Client


class RecordingMemory:
    """Records each call with its user; `fail` is raised by every call when set."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail = fail

    def _call(self, name: str, **kwargs: Any) -> None:
        self.calls.append((name, kwargs))
        if self.fail is not None:
            raise self.fail

    def add(self, messages: Any, **kwargs: Any) -> AddResult:
        self._call("add", messages=messages, **kwargs)
        return AddResult(turn_ids=["t1"], pending=1, usage=_usage(1))

    def flush(self, **kwargs: Any) -> AddResult:
        self._call("flush", **kwargs)
        return AddResult(segments_written=["g1"], summaries_written=["s1"], usage=_usage(2))

    def get(self, memory_id: str, **kwargs: Any) -> Any:
        self._call("get", memory_id=memory_id, **kwargs)
        raise NotFoundError("memory", memory_id)


def _usage(calls: int) -> Usage:
    return Usage(roles={"summarise": RoleUsage(calls=calls)})


def call(memory: Any, tool: str, args: dict[str, Any]) -> Any:
    async def run() -> Any:
        async with Client(build_mcp_server(memory, "alice")) as client:
            return await client.call_tool(tool, args)

    return anyio.run(run)


def test_add_flushes_on_request_and_ignores_a_smuggled_user() -> None:
    memory = RecordingMemory()
    messages = [{"speaker": "Ann", "text": "hi", "timestamp": "2024-01-02"}]
    result = call(memory, "add_memory", {"messages": messages, "flush": True, "user_id": "bob"})
    assert not result.is_error, result.content
    assert [(name, kw["user_id"]) for name, kw in memory.calls] == [
        ("add", "alice"),
        ("flush", "alice"),
    ]
    assert memory.calls[0][1]["messages"] == messages  # the None fields left out
    out = result.structured_content
    assert out["summaries_written"] == ["s1"] and out["pending"] == 0
    assert out["usage"]["roles"]["summarise"]["calls"] == 3


def test_a_message_with_an_unknown_field_is_refused_before_memory_is_called() -> None:
    memory = RecordingMemory()
    result = call(memory, "add_memory", {"messages": [{"speaker": "A", "text": "x", "mood": 1}]})
    assert result.is_error and not memory.calls


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (NotFoundError("memory", "m1"), "NotFoundError: no memory 'm1' for this user"),
        (UserInputError("memory_id is empty"), "UserInputError: memory_id is empty"),
        (LLMUnavailable("down", role="answer"), "LLMUnavailable: [answer] down (temporary"),
    ],
)
def test_hymem_errors_are_tool_errors_with_their_message(error: Exception, expected: str) -> None:
    result = call(RecordingMemory(fail=error), "get_memory", {"memory_id": "m1"})
    assert result.is_error
    assert expected in result.content[0].text
    assert "Traceback" not in result.content[0].text


def test_an_unexpected_exception_keeps_its_text_on_the_server() -> None:
    result = call(
        RecordingMemory(fail=RuntimeError("secret path /x")), "get_memory", {"memory_id": "m"}
    )
    assert result.is_error and "secret" not in result.content[0].text


def test_temporary_failures_say_so() -> None:
    assert "retry" in str(tool_error(StoreLockedError("locked")))
    assert "retry" not in str(tool_error(NotFoundError("memory", "m")))


def test_added_then_flushed_keeps_the_add_turns_and_sums_both() -> None:
    added = AddResult(turn_ids=["t1", "t2"], new_turn_ids=["t2"], pending=2, usage=_usage(1))
    flushed = AddResult(summaries_written=["s"], segments_written=["g"], error="x", usage=_usage(4))
    merged = added_then_flushed(added, flushed)
    assert merged.turn_ids == ["t1", "t2"] and merged.new_turn_ids == ["t2"]
    assert merged.summaries_written == ["s"] and merged.pending == 0 and merged.error == "x"
    assert merged.usage.roles["summarise"].calls == 5
    assert added.usage.roles["summarise"].calls == 1  # the add's own result is not changed


@pytest.mark.parametrize(
    ("messages", "sent"),
    [
        (
            [{"role": "user", "content": "I live in Lisbon"}],
            [{"role": "user", "content": "I live in Lisbon"}],
        ),
        ({"role": "user", "content": "hi"}, [{"role": "user", "content": "hi"}]),
        (
            {"speaker": "Ann", "text": "hi", "id": "m1"},
            [{"speaker": "Ann", "text": "hi", "id": "m1"}],
        ),
        ("I live in Lisbon", "I live in Lisbon"),
    ],
    ids=["role-content-list", "one-dict", "speaker-text-dict", "plain-string"],
)
def test_add_takes_the_message_shapes_memory_add_takes(messages: Any, sent: Any) -> None:
    """Issue 49: the README's `{"role", "content"}` messages and a plain string were refused
    (`messages.0.speaker Field required`); they go to `Memory.add` as they came."""
    memory = RecordingMemory()
    result = call(memory, "add_memory", {"messages": messages})
    assert not result.is_error, result.content
    assert memory.calls == [
        ("add", {"messages": sent, "user_id": "alice", "session_id": "default", "timestamp": None})
    ]


def test_an_empty_list_of_messages_is_refused_before_memory_is_called() -> None:
    memory = RecordingMemory()
    assert call(memory, "add_memory", {"messages": []}).is_error and not memory.calls


def test_every_tool_describes_itself_and_each_of_its_arguments() -> None:
    async def tools() -> Any:
        async with Client(build_mcp_server(RecordingMemory(), "alice")) as client:
            return (await client.list_tools()).tools

    listed = anyio.run(tools)
    assert sorted(t.name for t in listed) == sorted(TOOL_NAMES)
    for t in listed:
        assert t.description and "\n\nArguments:\n" in t.description, t.name
        for name, schema in t.input_schema["properties"].items():
            assert schema.get("description"), (t.name, name)
            assert f"\n- {name} (" in t.description, (t.name, name)
    add = next(t for t in listed if t.name == "add_memory")
    assert "- messages (required): " in add.description
    assert "- flush (default false): " in add.description
