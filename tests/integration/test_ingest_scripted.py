"""The summariser behind the real openai client and the scripted server: outages keep turns
pending, the next flush retries them, and one buffer is one call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder

from tests.fixtures_ingest import summarise_reply, turns
from tests.fixtures_llm import make_scripted_roles

pytestmark = pytest.mark.integration

T0 = "2023-05-08T13:56:00"


def open_mem(path: Path, server: Any, **cfg: Any) -> Memory:
    roles = make_scripted_roles(server)
    config = MemoryConfig.defaults(embedder="hashing", **cfg)
    return Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)


def test_server_errors_keep_turns_pending_then_next_flush_succeeds(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.add_rule(role="summarise", fault="500", times=50)
    # no extractive stand-in (tests/integration/test_summarise_fallback.py has it on)
    with open_mem(tmp_path / "m", llm_server, summarise_fallback=False) as mem:
        mem.add(turns(6), user_id="u", session_id="s", timestamp=T0)
        res = mem.flush(user_id="u")
        assert res.error and "summarise" in res.error
        assert res.segments_written == [] and res.pending == 6
        assert [t.id for t in mem.pending(user_id="u")] == [f"t{i}" for i in range(6)]
        assert mem.stats(user_id="u")["segments"] == 0
        failed_calls = len(llm_server.requests_for("summarise"))
        assert failed_calls >= 2  # the LLM layer retried before giving up

        llm_server.reset()
        llm_server.add_rule(role="summarise", reply=summarise_reply)
        res = mem.flush(user_id="u")
        assert res.error is None and res.pending == 0
        assert len(llm_server.requests_for("summarise")) == 1  # one call for the whole buffer
        assert res.usage.roles["summarise"].calls == 1 and res.backend == "openai:test-model"
        hits = mem.search("fact about", user_id="u", k=20)
        assert {h.segment_id for h in hits} == set(res.segments_written)
        assert mem.stats(user_id="u")["pending_turns"] == 0


def test_buffer_threshold_gives_one_call_per_full_buffer(tmp_path: Path, llm_server: Any) -> None:
    llm_server.add_rule(role="summarise", reply=summarise_reply)
    with open_mem(tmp_path / "m", llm_server, buffer_tokens=48, segment_max_turns=3) as mem:
        for i in range(40):
            mem.add(turns(1, start=i), user_id="u", session_id="s", timestamp=T0)
        calls = len(llm_server.requests_for("summarise"))
        assert 3 <= calls <= 10  # buffers of >= 48 tokens (~6 turns), never one call per turn
        for body in llm_server.requests_for("summarise"):
            prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
            assert "[2023-05-08 13:56] Ann: I adopted puppy number" in prompt
        mem.flush(user_id="u")
        assert mem.stats(user_id="u")["pending_turns"] == 0
