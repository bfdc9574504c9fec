"""Issue 49: the MCP server over a real memory (LanceDB + Tantivy, hashing embedder, extractive
backend), in process: `add_memory` stores every message shape `Memory.add` takes, and the
instants in tool results carry their UTC offset."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from hymem.serve.mcp_server import build_mcp_server
from mcp import Client

from tests.fixtures_serve import hashing_memory

pytestmark = pytest.mark.integration


def test_add_memory_stores_each_shape_and_results_carry_offsets(tmp_path: Path) -> None:
    shapes: list[Any] = [
        [{"role": "user", "content": "I live in Lisbon"}, {"role": "assistant", "content": "Nice"}],
        {"role": "user", "content": "I adopted a cat called Luna"},
        "I play the cello",
    ]

    async def run() -> list[Any]:
        with hashing_memory(tmp_path / "m") as mem:
            async with Client(build_mcp_server(mem, "alice")) as client:
                for messages in shapes:
                    added = await client.call_tool(
                        "add_memory", {"messages": messages, "timestamp": "2026-11-28T06:52"}
                    )
                    assert not added.is_error, added.content
                page = await client.call_tool("list_memories", {"level": "turn"})
                assert not page.is_error, page.content
                return list(page.structured_content["items"])

    turns = anyio.run(run)
    said = [(t["speaker"], t["text"]) for t in turns]
    assert said == [
        ("user", "I live in Lisbon"),
        ("assistant", "Nice"),
        ("user", "I adopted a cat called Luna"),
        ("user", "I play the cello"),
    ]
    assert {t["timestamp"] for t in turns} == {"2026-11-28T06:52:00Z"}
    assert all(re.search(r"(Z|[+-]\d\d:\d\d)$", t["created_at"]) for t in turns)
