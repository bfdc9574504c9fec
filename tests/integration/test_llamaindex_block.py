"""Issue #32 (3): hymem as a LlamaIndex memory block, on the real `llama-index-core` (its
`Memory`, its `MockLLM`): facts from hymem's light path reach the prompt; messages leaving the
short-term history become hymem turns; the same block works with `AsyncMemory` and with the
REST `Client`; the docs block runs as written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hymem import AsyncMemory, MemoryConfig
from hymem.adapters.llamaindex import HymemMemoryBlock
from hymem.client import Client
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of
from llama_index.core.llms import ChatMessage, MockLLM
from llama_index.core.memory import Memory as ChatMemory

from tests.backfill_job import open_memory
from tests.doc_blocks import DOCS, blocks
from tests.fixtures_serve import Served

pytestmark = pytest.mark.integration

FACT = "My sister Ines teaches piano in Porto."


async def _prompt(memory: Any, question: str) -> str:
    chat = ChatMemory.from_defaults(
        session_id="s1", memory_blocks=[HymemMemoryBlock(memory=memory, user_id="alice")]
    )
    await chat.aput(ChatMessage(role="user", content=question))
    reply = await MockLLM().achat(await chat.aget())  # MockLLM answers with its prompt
    return str(reply.message.content)


def test_facts_from_hymem_reach_the_prompt(tmp_path: Path) -> None:
    with open_memory(str(tmp_path / "m")) as mem:
        mem.add(FACT, user_id="alice")
        mem.flush(user_id="alice")
        prompt = asyncio.run(_prompt(mem, "Where does my sister teach?"))
    assert prompt.startswith("system: <memory>") and "Ines teaches piano in Porto" in prompt


def test_messages_leaving_the_short_term_history_become_turns(tmp_path: Path) -> None:
    with open_memory(str(tmp_path / "m")) as mem:
        block = HymemMemoryBlock(memory=mem, user_id="alice", session_id="chat-1")
        chat = ChatMemory.from_defaults(session_id="s1", token_limit=60, memory_blocks=[block])

        async def talk() -> None:
            for i in range(8):
                role = "user" if i % 2 == 0 else "assistant"
                await chat.aput(ChatMessage(role=role, content=f"Message {i} about my kayak trip."))
                await chat.aput(ChatMessage(role="system", content="ignored by the block"))

        asyncio.run(talk())
        turns = store_of(mem).get_turns("alice")
    assert turns and {t.session_id for t in turns} == {"chat-1"}
    assert all("kayak" in t.text for t in turns)  # system messages were not added


def test_the_block_works_with_async_memory_and_the_rest_client(
    tmp_path: Path, rest_server: Served
) -> None:
    config = MemoryConfig.defaults()
    amem = AsyncMemory(str(tmp_path / "a"), embedder=HashingEmbedder(64), config=config)

    async def with_async() -> str:
        await amem.add(FACT, user_id="alice")
        await amem.flush(user_id="alice")
        try:
            return await _prompt(amem, "Where does my sister teach?")
        finally:
            await amem.aclose()

    assert "Porto" in asyncio.run(with_async())
    with Client(rest_server.url, api_key="ka") as client:
        client.add(FACT, user_id="alice")
        client.flush(user_id="alice")
        assert "Porto" in asyncio.run(_prompt(client, "Where does my sister teach?"))


def test_the_readme_block_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    [block] = blocks("## LlamaIndex", page=DOCS / "adapters.md")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/adapters.md LlamaIndex block", "exec"), {"__name__": "__readme__"})
    assert "Porto" in capsys.readouterr().out
