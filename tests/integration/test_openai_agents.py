"""Issue #32 (2): hymem in the OpenAI Agents SDK, on the real `openai-agents` runner and the
real `openai` client against a scripted OpenAI-compatible server on 127.0.0.1: the session
protocol (get, add, pop, clear) with messages reaching hymem; the memory tools driven by the
model's tool calls; the REST client in place of a Memory; the docs block as written."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from hymem import Memory, MemoryConfig
from hymem.adapters.openai_agents import NOTES_SESSION, HymemSession, memory_tools
from hymem.client import Client
from hymem.core.errors import ServerUnavailable, UserInputError
from hymem.core.types import TurnStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of
from openai import AsyncOpenAI, InternalServerError

from tests.backfill_job import open_memory
from tests.doc_blocks import DOCS, blocks
from tests.doubles import summarise_reply
from tests.fixtures_llm import make_scripted_roles
from tests.fixtures_serve import Served
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

FACT = "My sister Ines teaches piano in Porto."


@pytest.fixture
def llm() -> Iterator[ScriptedLLMServer]:
    set_tracing_disabled(True)  # nothing may leave 127.0.0.1
    with ScriptedLLMServer() as server:
        yield server


def _agent(server: ScriptedLLMServer, memory: Any, user_id: str = "alice") -> Agent[Any]:
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    return Agent(
        name="assistant",
        instructions="Look the user up in memory before answering.",
        model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
        tools=memory_tools(memory, user_id=user_id),
    )


def test_the_model_searches_memory_and_the_conversation_becomes_turns(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.add_rule(match="Ines teaches piano", reply="Your sister teaches piano in Porto.")
    llm.add_rule(tool_call={"name": "search_memory", "arguments": {"query": "sister"}}, times=1)
    with open_memory(str(tmp_path / "m")) as mem:
        mem.add(FACT, user_id="alice")
        mem.flush(user_id="alice")
        session = HymemSession(mem, user_id="alice", session_id="chat-1")
        result = asyncio.run(
            Runner.run(_agent(llm, mem), "Where does my sister teach?", session=session)
        )
        items = asyncio.run(session.get_items())
        turns = [(t.session_id, t.speaker, t.text) for t in store_of(mem).get_turns("alice")]
    assert result.final_output == "Your sister teaches piano in Porto."
    assert [i.get("type", "message") for i in items] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert "Ines teaches piano in Porto" in items[2]["output"]  # the tool read hymem
    assert turns[1:] == [
        ("chat-1", "user", "Where does my sister teach?"),
        ("chat-1", "assistant", "Your sister teaches piano in Porto."),
    ]  # tool calls and outputs are not conversation


def test_add_memory_is_remembered_for_a_later_session(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    fact = "Alice's cat Miso is twelve years old."
    llm.add_rule(match="remembered", reply="Noted.")
    llm.add_rule(tool_call={"name": "add_memory", "arguments": {"fact": fact}}, times=1)
    with open_memory(str(tmp_path / "m")) as mem:
        asyncio.run(Runner.run(_agent(llm, mem), "Remember my cat's age: twelve."))
        hits = mem.search("how old is the cat", user_id="alice")
        notes = store_of(mem).get_turns("alice")
    assert any("Miso" in h.text for h in hits)
    assert any(t.session_id == NOTES_SESSION and t.text == fact for t in notes)


def test_the_session_protocol_on_the_replay_history(tmp_path: Path) -> None:
    with open_memory(str(tmp_path / "m")) as mem:
        session = HymemSession(
            mem, user_id="alice", session_id="s", db_path=str(tmp_path / "sessions.db")
        )

        async def script() -> tuple[Any, ...]:
            await session.add_items([{"role": "user", "content": "one"}])
            await session.add_items(
                [
                    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c1", "output": "x"},
                    {"role": "assistant", "content": [{"type": "output_text", "text": "two"}]},
                ]
            )
            last_two = await session.get_items(limit=2)
            popped = await session.pop_item()
            left = await session.get_items()
            await session.clear_session()
            return last_two, popped, left, await session.get_items()

        last_two, popped, left, cleared = asyncio.run(script())
        texts = [t.text for t in store_of(mem).get_turns("alice")]
    assert [i.get("type") for i in last_two] == ["function_call_output", None]
    assert popped is not None and popped["role"] == "assistant"
    assert len(left) == 3 and cleared == []
    assert texts == ["one", "two"]  # long-term memory keeps what was said


PIN = "My bank PIN is 4242, remember it."


def test_one_session_id_is_one_history_per_user(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    """Two users, one session id, one replay file: every protocol call stays in its user's
    history, and the model sees only the caller's own items."""
    llm.add_rule(match="Hello", reply="Hi Bob.")
    db = str(tmp_path / "sessions.db")
    with open_memory(str(tmp_path / "m")) as mem:
        alice = HymemSession(mem, user_id="alice", session_id="chat-1", db_path=db)
        bob = HymemSession(mem, user_id="bob", session_id="chat-1", db_path=db)
        said = [{"role": "user", "content": PIN}, {"role": "assistant", "content": "Noted."}]

        async def script() -> dict[str, Any]:
            await alice.add_items(said)
            seen: dict[str, Any] = {"bob_first": await bob.get_items()}
            await Runner.run(_agent(llm, mem, "bob"), "Hello", session=bob)
            seen["bob_after_run"] = await bob.get_items()
            seen["bob_pops"] = [await bob.pop_item() for _ in range(3)]
            await bob.add_items([{"role": "user", "content": "Bob was here."}])
            await bob.clear_session()
            seen["bob_cleared"] = await bob.get_items()
            seen["alice"] = await alice.get_items()
            return seen

        seen = asyncio.run(script())
        bob_turns = [t.text for t in store_of(mem).get_turns("bob")]
    assert seen["bob_first"] == []
    assert [i.get("content") for i in seen["bob_after_run"]] == ["Hello", [ANY]]  # his own
    assert PIN not in str(llm.requests)  # the model never saw alice's items
    assert seen["bob_pops"][2] is None  # his two items, then nothing: alice's are not his
    assert seen["bob_cleared"] == []
    assert seen["alice"] == said  # bob's pops and clear left alice's history alone
    assert PIN not in bob_turns


def test_a_repeated_exchange_is_stored_each_time(tmp_path: Path) -> None:
    """The same question and answer twice in one session are two exchanges: the replay holds
    four items, and long-term memory four turns."""
    exchange = [
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "You're welcome."}]},
    ]
    with open_memory(str(tmp_path / "m")) as mem:
        session = HymemSession(mem, user_id="alice", session_id="chat-1")

        async def script() -> list[Any]:
            await session.add_items(exchange)
            await session.add_items(exchange)
            return await session.get_items()

        items = asyncio.run(script())
        turns = [(t.speaker, t.text) for t in store_of(mem).get_turns("alice")]
    assert len(items) == 4
    assert turns == [("user", "Thanks!"), ("assistant", "You're welcome.")] * 2


def test_a_question_asked_again_after_a_failed_run_is_stored_twice(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """The runner saves the input before the model answers; the model fails, the user asks
    again: the replay and long-term memory both hold the question twice."""
    llm.add_rule(fault="500", times=1)
    llm.add_rule(match="Are you there?", reply="Yes.")
    with open_memory(str(tmp_path / "m")) as mem:
        session = HymemSession(mem, user_id="alice", session_id="chat-1")
        with pytest.raises(InternalServerError):
            asyncio.run(Runner.run(_agent(llm, mem), "Are you there?", session=session))
        asyncio.run(Runner.run(_agent(llm, mem), "Are you there?", session=session))
        items = asyncio.run(session.get_items())
        turns = [(t.speaker, t.text) for t in store_of(mem).get_turns("alice")]
    assert [i.get("content") for i in items[:2]] == ["Are you there?"] * 2
    assert turns == [("user", "Are you there?")] * 2 + [("assistant", "Yes.")]


def test_a_write_whose_answer_was_lost_is_stored_once_when_made_again(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """The REST client gives up on an add the server goes on to complete (its summariser is
    slow), so `add_items` fails; the same items written again land once in the replay and
    once in hymem."""
    llm.add_rule(role="summarise", reply=summarise_reply, delay_s=3.0, times=1)
    llm.add_rule(role="summarise", reply=summarise_reply)
    config = MemoryConfig.defaults(embedder="hashing", flush_on_add=True)
    mem = Memory(
        tmp_path / "m", config=config, embedder=HashingEmbedder(64), roles=make_scripted_roles(llm)
    )
    served = Served(mem)
    exchange = [
        {"role": "user", "content": "I moved to Porto."},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Nice city!"}]},
    ]
    try:
        with Client(served.url, api_key="ka", timeout=0.5) as client:
            session = HymemSession(client, user_id="alice", session_id="chat-1")
            with pytest.raises(ServerUnavailable):
                asyncio.run(session.add_items(exchange))
            deadline = time.monotonic() + 30
            while len(store_of(mem).get_turns("alice", status=TurnStatus.STORED)) < 2:
                assert time.monotonic() < deadline, "the server never finished the first add"
                time.sleep(0.1)
            asyncio.run(session.add_items(exchange))
            items = asyncio.run(session.get_items())
        turns = [(t.speaker, t.text) for t in store_of(mem).get_turns("alice")]
    finally:
        served.stop()
    assert len(items) == 2
    assert turns == [("user", "I moved to Porto."), ("assistant", "Nice city!")]


@pytest.mark.parametrize(("user_id", "session_id"), [("", "chat-1"), ("bob", " "), (None, "s")])
def test_a_session_without_a_user_or_session_is_refused(
    tmp_path: Path, user_id: Any, session_id: Any
) -> None:
    """The user is the history's scope, so a session is never opened without one."""
    with open_memory(str(tmp_path / "m")) as mem, pytest.raises(UserInputError):
        HymemSession(mem, user_id=user_id, session_id=session_id)


def test_the_session_and_tools_work_through_the_rest_client(
    rest_server: Served, llm: ScriptedLLMServer
) -> None:
    llm.add_rule(match="Ines teaches piano", reply="Porto.")
    llm.add_rule(tool_call={"name": "search_memory", "arguments": {"query": "sister"}}, times=1)
    with Client(rest_server.url, api_key="ka") as client:
        client.add(FACT, user_id="alice")
        client.flush(user_id="alice")
        session = HymemSession(client, user_id="alice", session_id="chat-2")
        result = asyncio.run(Runner.run(_agent(llm, client), "Where?", session=session))
        page = client.get_all(user_id="alice", level="turn", status="all")
    assert result.final_output == "Porto."
    assert {getattr(t, "session_id", None) for t in page.items} == {"default", "chat-2"}


def test_the_readme_block_runs_as_written(
    tmp_path: Path,
    llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm.add_rule(match="Ines teaches piano", reply="She teaches piano in Porto.")
    llm.add_rule(tool_call={"name": "search_memory", "arguments": {"query": "sister"}}, times=1)
    [block] = blocks("## OpenAI Agents SDK", page=DOCS / "adapters.md")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    exec(compile(block, "docs/adapters.md OpenAI Agents block", "exec"), {"__name__": "__readme__"})
    assert "She teaches piano in Porto." in capsys.readouterr().out
    assert (tmp_path / "sessions.db").is_file()
