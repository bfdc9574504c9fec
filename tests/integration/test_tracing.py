"""OpenTelemetry spans with the SDK's in-memory exporter: the span tree of an escalated ask and
of a flush (real openai client -> scripted server, real LanceDB + Tantivy), FastAPI's request
span over real HTTP as the parent of hymem's, and user ids only as a keyed hash."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.tracing import USER_HASH, user_hash
from hymem.embed.embedders import HashingEmbedder
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.fixtures_ingest import summarise_reply, turns
from tests.fixtures_llm import make_scripted_roles
from tests.fixtures_reader import pick_where

pytestmark = pytest.mark.integration

T0 = "2023-05-08T13:56:00"
_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def provider() -> Iterator[None]:
    """The SDK configured once for the process (OpenTelemetry allows one global provider);
    the exporter is shut down afterwards so later tests record nothing."""
    sdk = TracerProvider()
    sdk.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(sdk)
    yield
    _EXPORTER.shutdown()


@pytest.fixture
def spans(provider: None) -> Iterator[InMemorySpanExporter]:
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def tree(finished: tuple[ReadableSpan, ...], root: ReadableSpan) -> list[str]:
    """Span names under `root`, depth-first in start order, indented by depth."""
    children: dict[int, list[ReadableSpan]] = {}
    for s in finished:
        if s.parent is not None:
            children.setdefault(s.parent.span_id, []).append(s)
    out: list[str] = []

    def walk(node: ReadableSpan, depth: int) -> None:
        out.append("  " * depth + node.name)
        for child in sorted(children.get(node.context.span_id, []), key=lambda c: c.start_time):
            walk(child, depth + 1)

    walk(root, 0)
    return out


def only(finished: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (span,) = [s for s in finished if s.name == name]
    return span


def open_mem(path: Path, server: Any, **cfg: Any) -> Memory:
    config = MemoryConfig.defaults(embedder="hashing", telemetry_hash_key="k1", **cfg)
    roles = make_scripted_roles(server)
    return Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)


def test_flush_span_tree(tmp_path: Path, llm_server: Any, spans: InMemorySpanExporter) -> None:
    llm_server.add_rule(role="summarise", reply=summarise_reply)
    with open_mem(tmp_path / "m", llm_server) as mem:
        mem.add(turns(6), user_id="alice", session_id="s", timestamp=T0)
        spans.clear()
        mem.flush(user_id="alice")
    finished = spans.get_finished_spans()
    flush = only(finished, "hymem.flush")
    assert tree(finished, flush) == [
        "hymem.flush",
        "  hymem.embed",
        "  hymem.segment",
        "  hymem.summarise",
        "    chat test-model",
        "  hymem.commit",
    ]
    assert flush.attributes is not None
    assert flush.attributes[USER_HASH] == user_hash("alice", "k1")
    assert "alice" not in str(dict(flush.attributes))
    commit = only(finished, "hymem.commit")
    assert commit.attributes is not None
    assert commit.attributes["db.system.name"] == "lancedb"
    assert commit.attributes["hymem.turns"] == 6
    chat = only(finished, "chat test-model")
    assert chat.kind is trace.SpanKind.CLIENT and chat.attributes is not None
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "test-model"
    assert chat.attributes["hymem.role"] == "summarise"
    assert chat.attributes["gen_ai.usage.input_tokens"] > 0  # type: ignore[operator]  # int


def test_escalated_ask_span_tree(
    scripted_memory: Any, llm_server: Any, spans: InMemorySpanExporter
) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_where("sunrise", "pottery"))
    llm_server.add_rule(role="deep_answer", reply={"answer": "a sunrise and a bowl"})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    ans = scripted_memory.ask("What did Melanie paint and make?", user_id="alice", N=20, d=10)
    assert ans.escalated
    finished = spans.get_finished_spans()
    ask = only(finished, "hymem.ask")
    assert tree(finished, ask) == [
        "hymem.ask",
        "  hymem.round",
        "    hymem.light",
        "      chat test-model",
        "    hymem.escalate",
        "    hymem.select",
        "      chat test-model",
        "      chat test-model",
        "    hymem.deep_answer",
        "      chat test-model",
        "    hymem.reflect",
        "      chat test-model",
    ]
    escalate = only(finished, "hymem.escalate")
    assert escalate.attributes is not None
    assert escalate.attributes["hymem.escalation.reason"] == "verdict"
    roles = [
        s.attributes["hymem.role"]
        for s in sorted(finished, key=lambda s: s.start_time)
        if s.name.startswith("chat ") and s.attributes is not None
    ]
    assert roles == ["light_answer", "select", "select", "deep_answer", "reflect"]
    # the selection batches ran on pool threads and are still the select span's children
    select = only(finished, "hymem.select")
    batches = [s for s in finished if s.parent and s.parent.span_id == select.context.span_id]
    assert len(batches) == 2


def test_failed_call_span_is_an_error(
    tmp_path: Path, llm_server: Any, spans: InMemorySpanExporter
) -> None:
    with open_mem(tmp_path / "m", llm_server) as mem, pytest.raises(Exception) as raised:
        mem.search("x", user_id="alice", k=0)
    span = only(spans.get_finished_spans(), "hymem.search")
    assert span.status.status_code is trace.StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["error.type"] == type(raised.value).__name__


def test_user_ids_can_be_left_out(
    tmp_path: Path, llm_server: Any, spans: InMemorySpanExporter
) -> None:
    with open_mem(tmp_path / "m", llm_server, telemetry_user_ids="omit") as mem:
        mem.search("x", user_id="alice")
    span = only(spans.get_finished_spans(), "hymem.search")
    assert span.attributes is not None and USER_HASH not in span.attributes


def test_rest_request_span_is_the_parent_of_the_memory_call(
    tmp_path: Path, llm_server: Any, spans: InMemorySpanExporter
) -> None:
    from tests.fixtures_serve import Served

    server = Served(open_mem(tmp_path / "m", llm_server))
    try:
        parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        reply = server.http.post(
            "/v1/search",
            json={"query": "pottery", "user_id": "alice"},
            headers={"traceparent": parent, "Authorization": "Bearer ka"},
        )
        assert reply.status_code == 200, reply.text
    finally:
        server.stop()
    finished = spans.get_finished_spans()
    # FastAPI's own request span (HTTP conventions), continuing the caller's trace
    (request,) = [s for s in finished if s.kind is trace.SpanKind.SERVER]
    assert request.name == "POST /v1/search"
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/v1/search"
    assert request.attributes["http.response.status_code"] == 200
    assert request.context.trace_id == 0x0AF7651916CD43DD8448EB211C80319C
    # hymem's call span sits under it (through FastAPI's endpoint span)
    by_id = {s.context.span_id: s for s in finished}
    node = only(finished, "hymem.search")
    while node.parent is not None and node.parent.span_id in by_id:
        node = by_id[node.parent.span_id]
    assert node is request
