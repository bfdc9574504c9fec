"""Traces against the real store: rows read back with Memory.traces(); a failing trace write
(a store wrapper whose write_trace raises) never fails the ask."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hymem.core.errors import StoreError
from hymem.read.params import ask_params
from hymem.read.reader import Reader
from hymem.testing import embedder_of, roles_of, searcher_of, store_of

from tests.fixtures_reader import pick_first
from tests.log_events import capture_events

pytestmark = pytest.mark.integration


class FailingTraceStore:
    """The real store, except that writing a trace fails."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def write_trace(self, trace: dict[str, Any]) -> None:
        raise StoreError("traces table is unavailable")


def script_deep(server: Any) -> None:
    server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    server.add_rule(role="select", reply=pick_first)
    server.add_rule(role="deep_answer", reply={"answer": "a golden retriever named Oscar"})
    server.add_rule(role="reflect", reply={"complete": True})


def test_trace_rows_round_trip(scripted_memory: Any, llm_server: Any) -> None:
    script_deep(llm_server)
    start = datetime.now(UTC) - timedelta(seconds=1)
    ans = scripted_memory.ask("What is the puppy's name?", user_id="alice", N=10, d=5)
    (trace,) = scripted_memory.traces(user_id="alice", since=start)
    assert trace.trace_id == ans.trace_id
    assert (trace.path, trace.escalated, trace.escalation_reason) == (
        "deep",
        True,
        "verdict",
    )
    assert trace.answer == "a golden retriever named Oscar"
    assert trace.usage["select"].calls == 2
    assert trace.prompt_versions["deep_answer"] == "deep_answer@2"
    assert trace.segment_ids and trace.turn_ids
    assert trace.rounds[0].candidate_ids[:10] == trace.rounds[0].candidate_ids
    assert set(trace.latency_ms) >= {"retrieve_light", "light_answer", "select", "total"}
    assert scripted_memory.traces(user_id="bob") == []
    assert scripted_memory.traces(since=datetime.now(UTC) + timedelta(hours=1)) == []


def test_failing_trace_write_does_not_fail_the_ask(scripted_memory: Any, llm_server: Any) -> None:
    script_deep(llm_server)
    mem = scripted_memory
    store = FailingTraceStore(store_of(mem))  # the Memory's real parts, this store wrapper aside
    reader = Reader(store, embedder_of(mem), searcher_of(mem), lambda: roles_of(mem), mem.config)
    with capture_events() as logs:
        question = "What is the puppy's name?"
        ans = reader.ask(ask_params(question, user_id="alice", config=mem.config, N=10, d=5))
        reader.close()
    assert ans.text == "a golden retriever named Oscar" and ans.path == "deep"
    failed = [e for e in logs if e["event"] == "ask.trace_failed"]
    assert [e["trace_id"] for e in failed] == [ans.trace_id]
    assert scripted_memory.traces() == []  # nothing was written, and nothing broke


def test_read_only_memory_still_answers(scripted_memory: Any, llm_server: Any) -> None:
    from hymem.api.memory import Memory
    from hymem.embed.embedders import HashingEmbedder

    path, cfg = scripted_memory.path, scripted_memory.config
    scripted_memory.close()
    llm_server.add_rule(role="light_answer", reply={"answer": "Oscar", "complete": True})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    with Memory(path, config=cfg, embedder=HashingEmbedder(), read_only=True) as mem:
        ans = mem.ask("What is the puppy's name?", user_id="alice")
        assert ans.text == "Oscar"
        assert mem.traces() == []
