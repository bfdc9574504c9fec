"""Edges of the openai path: scripted-server defaults, request slots, the cache under threads,
and the roles reached through Memory."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMUnavailable
from hymem.embed.embedders import HashingEmbedder
from hymem.llm import build_roles, map_concurrent
from hymem.llm.backend import Completion
from hymem.llm.cache import ResponseCache
from hymem.llm.prompted import PromptedRoles
from hymem.llm.roles import ContextItem
from hymem.testing import roles_of

from tests.fixtures_llm import assert_loopback, make_scripted_roles
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration


def test_unscripted_request_fails_loudly(llm_server: ScriptedLLMServer) -> None:
    roles = make_scripted_roles(llm_server, llm_max_retries=0)
    with pytest.raises(LLMUnavailable, match="no rule matches role='reflect'"):
        roles.reflect("q", "a")
    roles.close()


def test_waiting_for_a_request_slot_counts_against_the_deadline(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_rule(role="reflect", reply={"complete": True}, delay_s=1.5)
    one_slot = threading.BoundedSemaphore(1)
    roles = make_scripted_roles(llm_server, slots=one_slot, llm_timeout_s=0.5)
    slow = make_scripted_roles(llm_server, slots=one_slot, llm_timeout_s=5.0)
    holder = threading.Thread(target=lambda: slow.reflect("first", "a"))
    holder.start()
    deadline = time.monotonic() + 30  # the first request is at the server: it holds the slot
    while not llm_server.requests_for("reflect"):
        assert time.monotonic() < deadline, "the first request never reached the server"
        time.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="no free request slot"):
        roles.reflect("second", "a")
    assert time.monotonic() - started < 1.2
    holder.join()
    assert len(llm_server.requests_for("reflect")) == 1


def test_no_call_results_cost_nothing(llm_server: ScriptedLLMServer) -> None:
    roles = make_scripted_roles(llm_server)
    sel = roles.select_events("q", [])
    upd = roles.update(ContextItem(id="t", text="x"), [])
    assert sel.output.ids == [] and upd.output.action == "ignore"
    assert sel.prompt_version == "select@2" and sel.usage.calls == 0
    assert llm_server.requests == []


def test_cache_is_safe_under_concurrent_writers(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    text = "x" * 20_000
    torn: list[str] = []

    def hammer(i: int) -> None:
        for _ in range(30):
            cache.put("k" * 64, Completion(text=text, model=f"m{i}"))
            hit = cache.get("k" * 64)
            if hit is None or hit.text != text:
                torn.append(repr(hit)[:40])

    map_concurrent(hammer, list(range(6)), 6)
    assert torn == []
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary files left behind
    (tmp_path / "kk" / ("k" * 64 + ".json")).write_text("{not json")
    assert cache.get("k" * 64) is None  # a corrupt entry is a miss, not a crash


def test_memory_builds_prompted_roles(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    from hymem.api.memory import Memory

    llm_server.add_rule(role="reflect", reply={"complete": True})
    cfg = MemoryConfig.defaults(
        llm="openai:test-model", llm_base_url=llm_server.base_url, llm_api_key="test-key"
    )
    with Memory(tmp_path / "mem", config=cfg, embedder=HashingEmbedder()) as mem:
        roles = roles_of(mem)
        assert isinstance(roles, PromptedRoles) and roles.label == "openai:test-model"
        assert roles.reflect("q", "a").output.complete


def test_extractive_spec_builds_the_model_free_roles() -> None:
    roles = build_roles(MemoryConfig.defaults(), HashingEmbedder())
    assert roles.label == "extractive"
    roles.close()


def test_loopback_guard() -> None:
    assert_loopback("http://127.0.0.1:1234/v1")
    with pytest.raises(RuntimeError, match="loopback"):
        assert_loopback("https://api.openai.com/v1")
