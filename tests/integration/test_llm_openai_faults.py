"""PromptedRoles through the real `openai` client against the scripted server: faults."""

from __future__ import annotations

import time
from datetime import datetime

import pytest
from hymem.core.errors import LLMAuthError, LLMOutputError, LLMRequestError, LLMUnavailable
from hymem.llm.checks import UNABLE_TO_ANSWER
from hymem.llm.prompted import PromptedRoles
from hymem.llm.roles import ContextItem, SegmentInput

from tests.fixtures_llm import make_scripted_roles
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

MEM = [
    ContextItem(id="m1", text="Caroline went to a support group", time_start=datetime(2023, 5, 7))
]
OK_LIGHT = {"answer": "7 May 2023", "complete": True}


def test_429_with_retry_after_then_success(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="light_answer", fault="429", retry_after=0.3, times=1)
    llm_server.add_rule(role="light_answer", reply=OK_LIGHT)
    started = time.monotonic()
    res = scripted_roles.light_answer("When?", MEM, [])
    assert time.monotonic() - started >= 0.3  # the Retry-After was honoured
    assert res.output.answer == "7 May 2023" and res.output.complete
    assert res.usage.retries == 1 and res.usage.calls == 1 and not res.fallback
    assert len(llm_server.requests) == 2
    assert scripted_roles.cumulative_usage()["light_answer"].retries == 1


def test_500_beyond_the_budget_is_unavailable(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="select", fault="500")
    with pytest.raises(LLMUnavailable, match=r"\[select\]") as info:
        scripted_roles.select_events("q", MEM)
    assert info.value.role == "select" and info.value.status_code == 500
    assert len(llm_server.requests) == scripted_roles.retry_policy.max_retries + 1
    assert scripted_roles.cumulative_usage()["select"].retries == 3


def test_401_fails_at_once(llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles) -> None:
    llm_server.add_rule(role="reflect", fault="401")
    with pytest.raises(LLMAuthError, match=r"\[reflect\].*401"):
        scripted_roles.reflect("q", "a")
    assert len(llm_server.requests) == 1


def test_400_is_a_request_error_without_retry(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="judge", fault="400", reply="context length exceeded")
    with pytest.raises(LLMRequestError, match="context length"):
        scripted_roles.judge("q", "gold", "gen")
    assert len(llm_server.requests) == 1


def test_dropped_connection_then_success(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="reflect", fault="drop", times=1)
    llm_server.add_rule(role="reflect", reply={"complete": True, "new_question": None})
    res = scripted_roles.reflect("q", "a")
    assert res.output.complete and res.usage.retries == 1
    assert len(llm_server.requests) == 2


def test_slow_reply_hits_the_deadline(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_rule(role="deep_answer", fault="slow", delay_s=10.0, reply={"answer": "x"})
    roles = make_scripted_roles(llm_server, llm_timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"\[deep_answer\].*timed out"):
        roles.deep_answer("q", MEM, [])
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 2.0
    roles.close()


def test_malformed_then_valid_is_repaired(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="light_answer", fault="malformed", times=1)
    llm_server.add_rule(role="light_answer", reply=OK_LIGHT)
    res = scripted_roles.light_answer("When?", MEM, [])
    assert res.output.answer == "7 May 2023" and not res.fallback
    assert res.usage.calls == 2
    bodies = llm_server.requests_for("light_answer")
    assert len(bodies) == 2
    repair = bodies[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "unquoted" in repair[-2]["content"]
    assert "no JSON object" in repair[-1]["content"]


def test_schema_invalid_reply_shows_the_field(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "x", "complete": "perhaps"}, times=1)
    llm_server.add_rule(role="light_answer", reply=OK_LIGHT)
    res = scripted_roles.light_answer("When?", MEM, [])
    assert res.output.complete and not res.fallback
    assert "complete" in llm_server.requests_for("light_answer")[1]["messages"][-1]["content"]


def test_empty_reply_is_malformed(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="light_answer", fault="empty", times=1)
    llm_server.add_rule(role="light_answer", reply=OK_LIGHT)
    res = scripted_roles.light_answer("When?", MEM, [])
    assert res.usage.calls == 2 and not res.fallback
    repair = llm_server.requests_for("light_answer")[1]["messages"]
    assert repair[-2]["content"] == "(empty reply)" and "empty" in repair[-1]["content"]


def test_always_malformed_falls_back_per_role(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(fault="malformed")
    attempts = scripted_roles.config.llm_repair_attempts + 1

    light = scripted_roles.light_answer("q", MEM, [])
    assert light.fallback and light.output.complete is False
    assert light.usage.calls == attempts and light.usage.fallbacks == 1
    assert "no JSON" in (light.fallback_reason or "")

    cands = [ContextItem(id=f"c{i}", text=f"t{i}") for i in range(5)]
    sel = scripted_roles.select_events("q", cands)
    assert sel.fallback and sel.output.ids == ["c0", "c1", "c2"]

    deep = scripted_roles.deep_answer("q", MEM, ["earlier answer"])
    assert deep.fallback and deep.output.answer == "earlier answer"
    deep = scripted_roles.deep_answer("q", MEM, [])
    assert deep.fallback and deep.output.answer == UNABLE_TO_ANSWER

    assert scripted_roles.reflect("q", "a").output.complete is True
    upd = scripted_roles.update(MEM[0], [ContextItem(id="n1", text="newer")])
    assert upd.fallback and upd.output.action == "ignore"

    with pytest.raises(LLMOutputError, match=r"\[summarise\]"):
        scripted_roles.summarise([SegmentInput(segment_id="s1", lines=["[t] A: hi"])])
    with pytest.raises(LLMOutputError, match=r"\[judge\]"):
        scripted_roles.judge("q", "g", "a")
    assert scripted_roles.cumulative_usage()["light_answer"].fallbacks == 1


def test_select_ids_are_validated_back(
    llm_server: ScriptedLLMServer, scripted_roles: PromptedRoles
) -> None:
    llm_server.add_rule(role="select", reply={"ids": ["ghost"]}, times=1)
    llm_server.add_rule(role="select", reply={"ids": ["c1", "ghost2"]})
    cands = [ContextItem(id="c0", text="a"), ContextItem(id="c1", text="b")]
    res = scripted_roles.select_events("q", cands)
    assert res.output.ids == ["c1"] and not res.fallback
    assert any("ghost2" in n for n in res.notes)
    assert "ghost" in llm_server.requests_for("select")[1]["messages"][-1]["content"]
