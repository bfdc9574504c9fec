"""The read path end to end: real openai client -> scripted server, real LanceDB + Tantivy."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hymem.core.types import Level
from hymem.testing import store_of

from tests.doubles import scripted_config
from tests.fixtures_reader import (
    PASSAGE_ID,
    pick_first,
    pick_where,
    request_text,
    shown_candidates,
)

pytestmark = pytest.mark.integration

Q_GROUP = "When did Caroline go to the support group?"


def roles_called(server: Any) -> list[str]:
    return [role for role, _ in server.requests]


def test_complete_light_verdict_makes_no_deep_calls(scripted_memory: Any, llm_server: Any) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "7 May 2023", "complete": True})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    ans = scripted_memory.ask(Q_GROUP, user_id="alice")
    assert roles_called(llm_server) == ["light_answer", "reflect"]
    assert (ans.text, ans.path, ans.escalated) == ("7 May 2023", "light", False)
    # the light prompt showed dated summaries, the support-group fact among them
    shown = dict(shown_candidates(llm_server.requests_for("light_answer")[0]))
    assert any("support group" in text for text in shown.values())
    assert "7 May 2023" in request_text(llm_server.requests_for("light_answer")[0])


def test_incomplete_verdict_escalates_and_reads_exactly_the_linked_segments(
    scripted_memory: Any, llm_server: Any
) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_where("sunrise", "pottery"))
    llm_server.add_rule(role="deep_answer", reply={"answer": "a sunrise and a bowl"})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    ans = scripted_memory.ask(
        "What did Melanie paint and make in pottery?", user_id="alice", N=10, d=10
    )
    assert ans.escalated and ans.escalation_reason == "verdict" and ans.path == "deep"
    assert ans.fallbacks == []
    (deep_body,) = llm_server.requests_for("deep_answer")
    assert PASSAGE_ID.findall(request_text(deep_body)) == ["alice-seg1", "alice-seg5"]
    segs = [h for h in ans.evidence if h.level == Level.SEGMENT]
    assert [h.id for h in segs] == ["alice-seg1", "alice-seg5"]
    assert segs[0].turn_ids == ["alice-t1-0", "alice-t1-1"]
    assert segs[0].text.startswith("[2023-05-11 13:56] Melanie: I painted a sunrise")
    sums = [h for h in ans.evidence if h.level == Level.SUMMARY]
    assert {h.id for h in sums} == {"alice-sum1-0", "alice-sum5-0"}


def test_deep_reads_the_segments_linked_from_every_batchs_selection(
    scripted_memory: Any, llm_server: Any
) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_first)
    llm_server.add_rule(role="deep_answer", reply={"answer": "several things"})
    ans = scripted_memory.ask(
        "What did the friends talk about?", user_id="alice", N=30, d=10, max_iterations=0
    )
    assert ans.path == "deep" and ans.fallbacks == []
    assert roles_called(llm_server).count("select") == 3
    (trace,) = scripted_memory.traces(user_id="alice")
    selected = trace.rounds[0].selected_ids
    assert len(selected) == 3  # one per batch
    linked = {s.segment_id for s in store_of(scripted_memory).get_summaries("alice", ids=selected)}
    (deep_body,) = llm_server.requests_for("deep_answer")
    passages = PASSAGE_ID.findall(request_text(deep_body))
    assert set(passages) == linked and len(passages) == len(linked)
    assert trace.segment_ids == passages  # time-ordered, as the model saw them
    assert [h.id for h in ans.evidence if h.level == Level.SEGMENT] == passages


def test_selection_batches_run_concurrently(scripted_memory: Any, llm_server: Any) -> None:
    delay = 0.3
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_where("violin"), delay_s=delay)
    llm_server.add_rule(role="deep_answer", reply={"answer": "violin"})
    ans = scripted_memory.ask(
        "Who plays the violin?", user_id="alice", N=30, d=10, max_iterations=0
    )
    assert roles_called(llm_server).count("select") == 3
    assert llm_server.max_in_flight >= 3
    assert ans.latency_ms["select"] < 2 * delay * 1000


def test_reflection_rewrites_the_next_search_and_stops_at_the_cap(
    scripted_memory: Any, llm_server: Any
) -> None:
    counter = itertools.count(1)
    llm_server.add_rule(role="light_answer", reply={"answer": "partial", "complete": True})
    llm_server.add_rule(
        role="reflect",
        reply={"complete": False, "new_question": "Which puppy named Oscar?"},
        times=1,
    )
    llm_server.add_rule(
        role="reflect",
        reply=lambda body: {"complete": False, "new_question": f"follow-up {next(counter)}"},
    )
    ans = scripted_memory.ask("Tell me about Melanie's pets", user_id="alice", max_iterations=3)
    assert ans.iterations == 3 and not ans.complete
    assert roles_called(llm_server).count("reflect") == 3
    (trace,) = scripted_memory.traces(user_id="alice")
    queries = [r.query for r in trace.rounds]
    assert queries == ["Tell me about Melanie's pets", "Which puppy named Oscar?", "follow-up 1"]
    # the second round's search ran on the new question: the puppy fact is now its top hit
    assert trace.rounds[1].summary_ids[0] == "alice-sum9-0"
    # every round still answers the original question, with earlier answers in the pool
    last_light = request_text(llm_server.requests_for("light_answer")[2])
    assert "Tell me about Melanie's pets" in last_light and "1. partial" in last_light


@pytest.mark.parametrize("role", ["light_answer", "select", "deep_answer", "reflect"])
def test_malformed_output_takes_the_roles_fallback_and_shows_in_the_trace(
    scripted_memory: Any, llm_server: Any, role: str
) -> None:
    llm_server.add_rule(role=role, fault="malformed")
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_first)
    llm_server.add_rule(role="deep_answer", reply={"answer": "a necklace"})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    ans = scripted_memory.ask(
        "What did Caroline's grandmother give her?", user_id="alice", N=10, d=10
    )
    assert [f.split(":")[0] for f in ans.fallbacks] == [role]
    assert ans.usage.roles[role].fallbacks == 1
    (trace,) = scripted_memory.traces(user_id="alice")
    assert trace.fallbacks == ans.fallbacks
    if role == "light_answer":
        assert ans.escalation_reason == "fallback"
    if role == "reflect":
        assert ans.complete and ans.iterations == 1  # a broken reflector stops the loop
    if role == "select":
        assert ans.path == "deep" and any(h.level == Level.SEGMENT for h in ans.evidence)


def test_usage_totals_equal_what_the_server_reported(scripted_memory: Any, llm_server: Any) -> None:
    llm_server.add_rule(
        role="light_answer",
        reply={"answer": "", "complete": False},
        usage={"prompt_tokens": 101, "completion_tokens": 7},
    )
    llm_server.add_rule(role="select", reply=pick_where("race"))
    llm_server.add_rule(role="deep_answer", reply={"answer": "a charity race"})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    ans = scripted_memory.ask("What race did Caroline run?", user_id="alice")
    reported = llm_server.usage_totals()
    total = ans.usage.total
    assert (total.prompt_tokens, total.completion_tokens) == (
        reported["prompt_tokens"],
        reported["completion_tokens"],
    )
    assert total.calls == len(llm_server.requests)
    (trace,) = scripted_memory.traces(user_id="alice")
    assert trace.total_tokens == sum(reported.values())
    assert trace.total_calls == len(llm_server.requests)


def test_no_path_ever_shows_another_users_memory(scripted_memory: Any, llm_server: Any) -> None:
    # A misbehaving model answers selection with bob's summary id (and nothing of alice's).
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply={"ids": ["bob-sum0-0"]})
    llm_server.add_rule(role="deep_answer", reply={"answer": "unknown"})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    for depth in ("auto", "light", "deep"):
        ans = scripted_memory.ask(
            "What is the bank PIN under the mattress?", user_id="alice", depth=depth
        )
        assert all(h.user_id == "alice" for h in ans.evidence)
        hits = scripted_memory.context("bank PIN mattress", user_id="alice", depth=depth)
        assert all(h.user_id == "alice" for h in hits)
    for _, body in llm_server.requests:
        text = request_text(body)
        assert "4421" not in text and "bob-seg" not in text and "bob-sum" not in text
    for trace in scripted_memory.traces(user_id="alice"):
        assert not any(i.startswith("bob-") for i in trace.segment_ids + trace.summary_ids)


def test_budget_stops_escalation(scripted_memory: Any, llm_server: Any, tmp_path: Any) -> None:
    from hymem.api.memory import Memory
    from hymem.embed.embedders import HashingEmbedder

    scripted_memory.close()
    llm_server.add_rule(role="light_answer", reply={"answer": "maybe", "complete": False})
    cfg = scripted_config(llm_server, max_calls_per_ask=1)
    with Memory(tmp_path / "mem", config=cfg, embedder=HashingEmbedder()) as mem:
        ans = mem.ask(Q_GROUP, user_id="alice")
        assert ans.budget_exhausted and not ans.escalated and ans.text == "maybe"
        assert roles_called(llm_server) == ["light_answer"]
        (trace,) = mem.traces(user_id="alice")
        assert trace.budget_exhausted and trace.budget_stops
