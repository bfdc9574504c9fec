"""The backend layer against what a small local model server does: replies cut off at their
token budget, prompts over the context window, calls slower than a hosted API's, one request
at a time, and plain-text replies where JSON was asked for. Real `openai` client, servers on
127.0.0.1 (tests/llm_faults.py, tests/llm_server.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hymem.core.config import LLM_ROLES, MemoryConfig
from hymem.core.errors import (
    ConfigError,
    LLMContextOverflowError,
    LLMOutputError,
    LLMRequestError,
    LLMTruncatedError,
    LLMUnavailable,
)
from hymem.llm import map_concurrent
from hymem.llm.prompted import PromptedRoles
from hymem.llm.roles import ContextItem, Role, SegmentInput

from tests.fixtures_llm import assert_loopback, make_scripted_roles
from tests.llm_faults import OVERFLOW_BODIES, FaultLLMServer
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

SEGMENT = SegmentInput(
    segment_id="s1",
    lines=["[2023-05-08 13:56] Caroline: I went to the LGBTQ support group yesterday."],
)
SUMMARY = json.dumps(
    {
        "segments": [
            {
                "segment_id": "s1",
                "facts": ["Caroline went to an LGBTQ support group on 7 May 2023."],
            }
        ]
    }
)
PLAIN = "I think Jon lost his job in January."


@pytest.fixture
def faults() -> Iterator[FaultLLMServer]:
    server = FaultLLMServer().start()
    assert_loopback(server.base_url)
    try:
        yield server
    finally:
        server.stop()


def roles_for(server: FaultLLMServer, **config: Any) -> PromptedRoles:
    """PromptedRoles against a fault server (make_scripted_roles needs only its base_url)."""
    return make_scripted_roles(server, **config)  # type: ignore[arg-type]


# --- replies cut off at llm_max_tokens -----------------------------------------------------------


def test_cut_off_reply_is_asked_again_with_a_bigger_budget_not_repaired(
    faults: FaultLLMServer,
) -> None:
    faults.full_reply, faults.reply_tokens = SUMMARY, 1442  # a session summary's real size
    roles = roles_for(faults, llm_max_tokens=1024)
    res = roles.summarise([SEGMENT])
    assert [s.max_tokens for s in faults.seen] == [1024, 2048]  # one bigger-budget retry
    first, second = faults.seen
    assert second.messages == first.messages  # the cut-off text is never sent back
    assert res.output.segments[0].facts[0].text.startswith("Caroline went to an LGBTQ")
    assert not res.fallback and res.usage.calls == 2
    assert res.usage.completion_tokens == 1024 + 1442  # both replies are accounted
    assert roles.cumulative_usage()["summarise"].calls == 2
    roles.close()


def test_reply_still_cut_off_at_the_cap_is_a_typed_error(faults: FaultLLMServer) -> None:
    faults.full_reply, faults.reply_tokens = SUMMARY, 100_000  # a runaway generation
    roles = roles_for(faults, llm_max_tokens=1024)
    with pytest.raises(LLMTruncatedError, match=r"\[summarise\] .*cut off") as caught:
        roles.summarise([SEGMENT])
    assert isinstance(caught.value, LLMOutputError) and caught.value.role == "summarise"
    assert [s.max_tokens for s in faults.seen] == [1024, 2048, 4096]  # capped at 4x
    assert len({s.prompt_tokens for s in faults.seen}) == 1  # the prompt never grew
    assert roles.cumulative_usage()["summarise"].calls == 3
    roles.close()


def test_budget_growth_stops_at_the_context_window(faults: FaultLLMServer) -> None:
    faults.full_reply = SUMMARY
    roles = roles_for(faults, llm_max_tokens=1024)
    roles.summarise([SEGMENT])  # measures the prompt in the server's tokens
    prompt = faults.seen[0].prompt_tokens
    faults.seen.clear()
    faults.reply_tokens, faults.n_ctx = 1442, prompt + 1024 + 100  # 2048 does not fit
    with pytest.raises(LLMTruncatedError, match="summarise"):
        roles.summarise([SEGMENT])
    assert [s.max_tokens for s in faults.seen] == [1024, 2048]
    roles.close()


def test_answer_role_cut_off_at_the_cap_falls_back(faults: FaultLLMServer) -> None:
    faults.full_reply = json.dumps({"answer": "Paris " * 50, "complete": True})
    faults.reply_tokens = 10_000
    roles = roles_for(faults, llm_max_tokens=64)
    res = roles.light_answer("Where?", [ContextItem(id="m1", text="Paris")], [])
    assert res.fallback and not res.salvaged and res.output.complete is False
    assert "cut off" in (res.fallback_reason or "")
    assert [s.max_tokens for s in faults.seen] == [64, 128, 256]
    roles.close()


def test_default_budget_fits_a_session_summary() -> None:
    assert MemoryConfig.defaults().llm_max_tokens >= 1442


# --- prompts over the server's context window ----------------------------------------------------


@pytest.mark.parametrize("server_kind", sorted(OVERFLOW_BODIES))
def test_context_overflow_is_a_typed_request_error(
    faults: FaultLLMServer, server_kind: str
) -> None:
    faults.overflow, faults.overflow_always = server_kind, True
    roles = roles_for(faults)
    with pytest.raises(LLMContextOverflowError, match="context window") as caught:
        roles.deep_answer("What did Jon lose?", [ContextItem(id="p1", text="x")], [])
    assert isinstance(caught.value, LLMRequestError)
    assert caught.value.role == "deep_answer"
    assert caught.value.status_code == OVERFLOW_BODIES[server_kind][0]
    assert len(faults.seen) == 1  # never retried: the same prompt cannot fit next time
    roles.close()


def test_other_bad_requests_are_not_taken_for_overflow(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule(role="reflect", fault="400", reply="temperature must be <= 2")
    roles = make_scripted_roles(llm_server)
    with pytest.raises(LLMRequestError) as caught:
        roles.reflect("q", "a")
    assert not isinstance(caught.value, LLMContextOverflowError)
    roles.close()


# --- deadlines per role --------------------------------------------------------------------------


def test_a_role_gets_its_own_deadline(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule(role="summarise", reply=SUMMARY, delay_s=1.0)
    llm_server.add_rule(role="reflect", reply={"complete": True}, delay_s=1.0)
    roles = make_scripted_roles(
        llm_server, llm_timeout_s=0.4, llm_max_retries=0, llm_role_timeouts={"summarise": 10.0}
    )
    res = roles.summarise([SEGMENT])  # a CPU model's slow summary fits its own deadline
    assert res.output.segments[0].segment_id == "s1"
    with pytest.raises(LLMUnavailable, match=r"within 0.4s"):
        roles.reflect("q", "a")  # the other roles keep llm_timeout_s
    roles.close()


def test_role_deadlines_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYMEM_LLM_ROLE_TIMEOUTS", '{"summarise": 300, "select": 240}')
    cfg = MemoryConfig()
    assert cfg.llm_deadline_s("summarise") == 300.0
    assert cfg.llm_deadline_s("select") == 240.0
    assert cfg.llm_deadline_s("reflect") == cfg.llm_timeout_s == 60.0  # hosted-API default
    with pytest.raises(ConfigError, match=r"HYMEM_LLM_ROLE_TIMEOUTS.*unknown role 'summary'"):
        MemoryConfig.defaults(llm_role_timeouts={"summary": 30})
    with pytest.raises(ConfigError, match="above 0"):
        MemoryConfig.defaults(llm_role_timeouts={"select": 0})
    assert set(LLM_ROLES) == {role.value for role in Role}  # every role can be given one


# --- a one-request server ------------------------------------------------------------------------


def test_calls_queue_for_a_one_request_server_without_losing_their_time(
    faults: FaultLLMServer,
) -> None:
    """Three selections at once against a server that answers one request at a time: with
    llm_concurrency=1 they queue in hymem and never overlap at the server, and the third,
    queued for two answers' time, still has its full deadline for its own request."""
    faults.one_at_a_time, faults.delay_s = True, 1.0
    faults.full_reply = json.dumps({"ids": ["c1"]})
    roles = roles_for(faults, llm_concurrency=1, llm_timeout_s=2.5, llm_max_retries=0)
    candidates = [ContextItem(id="c1", text="Jon lost his job"), ContextItem(id="c2", text="x")]
    started = time.monotonic()
    results = map_concurrent(lambda q: roles.select_events(q, candidates), ["a", "b", "c"], 3)
    assert [r.output.ids for r in results] == [["c1"]] * 3
    assert not any(r.fallback for r in results)
    assert faults.overlapped == 0 and faults.max_in_flight == 1 and len(faults.seen) == 3
    assert time.monotonic() - started >= 3.0  # one after another
    roles.close()


# --- plain-text replies to the answer roles ------------------------------------------------------


def test_plain_text_answer_is_salvaged(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule(role="deep_answer", reply=PLAIN)
    llm_server.add_rule(role="light_answer", reply=f"Answer: {PLAIN}")
    roles = make_scripted_roles(llm_server, llm_repair_attempts=1)
    deep = roles.deep_answer("What happened to Jon?", [ContextItem(id="p1", text="x")], [])
    assert deep.output.answer == PLAIN
    assert deep.salvaged and deep.fallback and "plain-text" in (deep.fallback_reason or "")
    assert deep.usage.calls == 2 and deep.usage.fallbacks == 1  # the repair was tried first
    light = roles.light_answer("What happened to Jon?", [ContextItem(id="m1", text="x")], [])
    assert light.output.answer == PLAIN and light.salvaged
    assert light.output.complete is False  # the model never said its context sufficed
    assert roles.cumulative_usage()["deep_answer"].fallbacks == 1
    roles.close()


def test_only_answer_roles_salvage_and_only_prose(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule(role="deep_answer", fault="malformed")  # broken JSON is not prose
    llm_server.add_rule(role="reflect", reply="Yes, that answers it.")
    roles = make_scripted_roles(llm_server, llm_repair_attempts=0)
    deep = roles.deep_answer("q", [ContextItem(id="p1", text="x")], ["an earlier answer"])
    assert deep.fallback and not deep.salvaged and deep.output.answer == "an earlier answer"
    ref = roles.reflect("q", "a")
    assert ref.fallback and not ref.salvaged
    roles.close()
