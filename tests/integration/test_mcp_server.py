"""`hymem mcp` driven by the MCP SDK's own client, over stdio and over Streamable HTTP.

Each test starts the real command in a subprocess on a store where another user (bob) already
has memories, then runs one flow through the tools as alice: a client that smuggles a
`user_id` in still reads and writes alice only, bob's records are never returned, and an
unknown id is a tool error carrying NotFoundError's message."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hymem.api.memory import Memory
from hymem.cli import app
from hymem.core.errors import ConfigError
from hymem.serve.mcp_server import TOOL_NAMES
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult
from typer.testing import CliRunner

pytestmark = pytest.mark.integration

BACKEND = ["--llm", "extractive", "--embedder", "hashing"]
BOB_SECRET = "Bob keeps the vault code 4417 under the zebra statue."


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Path, str]:
    """A memory folder where bob already has one summary; returns (folder, bob's summary id)."""
    folder = tmp_path / "mem"
    with Memory(folder, llm="extractive", embedder="hashing") as mem:
        mem.add([{"speaker": "Bob", "text": BOB_SECRET}], user_id="bob", session_id="b1")
        written = mem.flush(user_id="bob").summaries_written
    assert written
    return folder, written[0]


def command(folder: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "hymem.cli", "mcp", "--store", str(folder), *BACKEND, *extra]


def data(result: CallToolResult) -> Any:
    """The structured result of a successful call (a list result comes wrapped in `result`)."""
    assert not result.is_error, result.content
    content = result.structured_content
    assert isinstance(content, dict)
    return content["result"] if set(content) == {"result"} else content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


async def add(client: Client, text: str, session: str) -> str:
    """Add one turn of alice's, flushed at once, with a smuggled user_id; its summary's id."""
    args = {"messages": [{"speaker": "Alice", "text": text}], "session_id": session}
    out = data(await client.call_tool("add_memory", {**args, "flush": True, "user_id": "bob"}))
    assert out["pending"] == 0 and len(out["summaries_written"]) == 1, out
    return str(out["summaries_written"][0])


async def core_flow(client: Client, bob_summary: str) -> None:
    """add → list → search → get → update → delete → ask, as alice whatever the client says."""
    tools = (await client.list_tools()).tools
    assert sorted(t.name for t in tools) == sorted(TOOL_NAMES)
    for tool in tools:
        assert "user_id" not in tool.input_schema.get("properties", {}), tool.name
        assert tool.description and tool.output_schema is not None, tool.name

    cat = await add(client, "I adopted a cat named Miso in May.", "s1")
    hike = await add(client, "Next week I am hiking in Yosemite with my sister.", "s2")

    page = data(await client.call_tool("list_memories", {"user_id": "bob"}))
    assert {item["id"] for item in page["items"]} == {cat, hike}
    assert {item["user_id"] for item in page["items"]} == {"alice"}

    hits = data(await client.call_tool("search_memory", {"query": "cat named Miso", "k": 5}))
    assert hits[0]["id"] == cat
    stolen = {"query": "vault code 4417 zebra statue", "user_id": "bob", "mode": "lexical"}
    hits = data(await client.call_tool("search_memory", stolen))
    assert all(h["user_id"] == "alice" and h["id"] != bob_summary for h in hits)

    item = data(await client.call_tool("get_memory", {"memory_id": cat}))
    assert item["summary"]["id"] == cat and "Miso" in item["source_turns"][0]["text"]
    refused = await client.call_tool("get_memory", {"memory_id": bob_summary, "user_id": "bob"})
    assert f"NotFoundError: no memory {bob_summary!r} for this user" in error_text(refused)
    unknown = await client.call_tool("get_memory", {"memory_id": "sum-unknown"})
    assert "NotFoundError: no memory 'sum-unknown' for this user" in error_text(unknown)

    fixed = "Alice adopted a cat named Miso in June."
    new = data(await client.call_tool("update_memory", {"memory_id": cat, "text": fixed}))
    assert new["id"] != cat and new["text"] == fixed and new["origin"] == "user"
    gone = data(await client.call_tool("delete_memory", {"memory_id": hike}))
    assert gone["status"] == "deleted"
    page = data(await client.call_tool("list_memories", {}))
    assert [item["id"] for item in page["items"]] == [new["id"]]
    assert new["memory_id"] == cat  # the agent's id still names the corrected memory
    again = data(await client.call_tool("update_memory", {"memory_id": cat, "text": fixed + "!"}))
    assert again["memory_id"] == cat and again["version"] == 3
    back = data(await client.call_tool("restore_memory", {"version_id": new["id"]}))
    assert back["id"] == new["id"] and back["status"] == "active"
    profile = data(await client.call_tool("get_profile", {"max_tokens": 100}))
    assert profile["user_id"] == "alice" and isinstance(profile["facts"], list)

    answer = data(await client.call_tool("ask_memory", {"question": "What is Alice's cat called?"}))
    assert answer["user_id"] == "alice" and "Miso" in answer["text"]
    assert {h["user_id"] for h in answer["evidence"]} == {"alice"}


def test_stdio_serves_the_configured_user_only(seeded: tuple[Path, str], tmp_path: Path) -> None:
    folder, bob_summary = seeded
    env = {"HYMEM_MCP_USER": "alice", "HYMEM_LOG_LEVEL": "info"}  # the user from the env
    params = StdioServerParameters(command=sys.executable, args=command(folder)[1:], env=env)
    log = tmp_path / "stderr.log"

    async def run() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await core_flow(client, bob_summary)

    anyio.run(run)
    events = [json.loads(line)["event"] for line in log.read_text().splitlines() if line[:1] == "{"]
    assert events.count("memory.close") == 1, log.read_text()  # closed once stdin ended
    with Memory(folder, embedder="hashing") as mem:  # the writer lock was released
        assert mem.get(bob_summary, user_id="bob").summary.text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"hymem mcp exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port} after {timeout} s")


def test_streamable_http_serves_the_configured_user_only(
    seeded: tuple[Path, str], tmp_path: Path
) -> None:
    folder, bob_summary = seeded
    port = free_port()
    args = command(folder, "--user", "alice", "--transport", "http", "--port", str(port))
    env = {**os.environ, "HYMEM_LOG_LEVEL": "info"}
    log = tmp_path / "stderr.log"
    with log.open("wb") as errlog:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=errlog, env=env)
        try:
            wait_for_port(port, proc)

            async def run() -> None:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    await core_flow(client, bob_summary)

            anyio.run(run)
        finally:
            proc.send_signal(signal.SIGTERM)
            # uvicorn shuts down gracefully, then re-raises the signal to die of it
            assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
    assert '"event": "memory.close"' in log.read_text(), log.read_text()  # closed before


def test_missing_user_is_a_config_error_before_the_store_opens(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    res = CliRunner().invoke(app, ["mcp", "--store", str(folder), *BACKEND], env={})
    assert isinstance(res.exception, ConfigError)
    assert "--user" in str(res.exception) and "HYMEM_MCP_USER" in str(res.exception)
    assert not folder.exists()


def test_sigterm_on_stdio_closes_the_memory(tmp_path: Path) -> None:
    """An agent runtime stops its server with SIGTERM once stdin is left open too long."""
    folder, log = tmp_path / "mem", tmp_path / "stderr.log"
    env = {**os.environ, "HYMEM_LOG_LEVEL": "info"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    with log.open("wb") as errlog:
        proc = subprocess.Popen(
            command(folder, "--user", "alice"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(hello) + "\n").encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving, stdin still open
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
        proc.stdin.close()
        proc.stdout.close()
    assert '"event": "memory.close"' in log.read_text(), log.read_text()
