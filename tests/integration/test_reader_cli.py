"""`hymem ask` / `hymem context` against a real folder and the scripted model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.cli import app
from hymem.core.config import MemoryConfig
from hymem.core.errors import UserInputError
from hymem.embed.embedders import HashingEmbedder
from typer.testing import CliRunner

from tests.fixtures_reader import alice_events, seed_memory

pytestmark = pytest.mark.integration


@pytest.fixture
def cli_store(tmp_path: Path, llm_server: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "mem"
    with Memory(path, config=MemoryConfig.defaults(), embedder=HashingEmbedder()) as mem:
        seed_memory(mem, "alice", alice_events())
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("HYMEM_LLM_MAX_RETRIES", "0")
    return path


def last_json(output: str) -> Any:
    """The command's JSON line (log events may share the captured stream)."""
    lines = [ln for ln in output.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1])


def test_ask_json(cli_store: Path, llm_server: Any) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "Oscar", "complete": True})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    args = [
        "ask",
        "What is the puppy called?",
        "--user",
        "alice",
        "--store",
        str(cli_store),
        "--embedder",
        "hashing",
        "--llm",
        "openai:test-model",
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    ans = last_json(result.output)
    assert ans["text"] == "Oscar" and ans["path"] == "light" and ans["user_id"] == "alice"
    with Memory(cli_store, embedder=HashingEmbedder(), read_only=True) as mem:
        assert [t.trace_id for t in mem.traces(user_id="alice")] == [ans["trace_id"]]


def test_ask_human_output(cli_store: Path, llm_server: Any) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "Oscar", "complete": True})
    args = [
        "ask",
        "What is the puppy called?",
        "-u",
        "alice",
        "-s",
        str(cli_store),
        "--embedder",
        "hashing",
        "--llm",
        "openai:test-model",
        "--max-iterations",
        "0",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Oscar" in result.output and "path=light" in result.output
    assert "alice-sum9-0" in result.output  # the evidence table


def test_context_deep_json(cli_store: Path, llm_server: Any) -> None:
    llm_server.add_rule(
        role="select",
        reply=lambda body: (
            {"ids": ["alice-sum9-0"]} if "alice-sum9-0" in json.dumps(body) else {"ids": []}
        ),
    )
    args = [
        "context",
        "puppy Oscar",
        "-u",
        "alice",
        "-s",
        str(cli_store),
        "--depth",
        "deep",
        "--embedder",
        "hashing",
        "--llm",
        "openai:test-model",
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    hit = last_json(result.output)
    assert hit["level"] == "segment" and hit["user_id"] == "alice"


def test_bad_depth_is_a_user_error(cli_store: Path) -> None:
    args = [
        "ask",
        "q",
        "-u",
        "alice",
        "-s",
        str(cli_store),
        "--embedder",
        "hashing",
        "--depth",
        "sideways",
    ]
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, UserInputError)
