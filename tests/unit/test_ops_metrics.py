"""Metrics and probes without a server: route templates as labels (never a raw path), what a
call's result adds to which metric, the store sizes' cache, and how a model server's answer
reads as readiness."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from hymem.core.config import MemoryConfig
from hymem.core.errors import NotFoundError, StoreClosedError
from hymem.core.types import AddResult, Answer, RoleUsage, Usage
from hymem.ops.calls import CallRecord
from hymem.ops.metrics import Metrics
from hymem.ops.readiness import ModelProbe
from hymem.ops.store_metrics import StoreCollector
from hymem.serve.metrics_http import UNMATCHED, method_label, route_label
from hymem.sleep.consolidator import SleepReport
from prometheus_client import CollectorRegistry


def _app() -> FastAPI:
    app = FastAPI()
    users = APIRouter()

    @users.get("/users/{user_id}/ask")
    def ask(user_id: str) -> str:
        return user_id

    @app.delete("/v1/memories/{memory_id}")
    def delete(memory_id: str) -> str:
        return memory_id

    app.include_router(users, prefix="/v1")
    return app


def _scope(method: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", **extra}


@pytest.mark.parametrize(
    ("method", "path", "label"),
    [
        ("GET", "/v1/users/alice/ask", "/v1/users/{user_id}/ask"),
        ("GET", "/v1/users/team-42%2Fx/ask", "/v1/users/{user_id}/ask"),
        ("PUT", "/v1/memories/sum-1", "/v1/memories/{memory_id}"),  # 405: the path matched
        ("GET", "/v1/users/alice", UNMATCHED),
        ("GET", "/alice/secret-record-id", UNMATCHED),
    ],
)
def test_requests_are_labelled_by_route_template(method: str, path: str, label: str) -> None:
    assert route_label(_app().router.routes, _scope(method, path)) == label


def test_unusual_methods_share_one_label() -> None:
    assert method_label("POST") == "POST"
    assert method_label("BREW") == method_label("get") == "other"


def _value(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def _usage(**roles: RoleUsage) -> Usage:
    return Usage(roles=dict(roles))


def test_each_result_feeds_its_metrics() -> None:
    metrics = Metrics()
    used = RoleUsage(calls=2, prompt_tokens=30, completion_tokens=7, retries=1)
    answer = Answer(
        text="Porto",
        question="where?",
        user_id="alice",
        path="deep",
        escalated=True,
        escalation_reason="verdict",
        complete=True,
        iterations=1,
        usage=_usage(select=used),
        trace_id="t1",
    )
    metrics.observe(CallRecord("ask", "alice", 0.2, answer))
    wrote = AddResult(
        new_turn_ids=["t1", "t2"], segments_written=["s1"], summaries_written=["m1", "m2"]
    )
    metrics.observe(CallRecord("flush", "alice", 0.5, wrote))
    metrics.observe(CallRecord("add", "alice", 0.1, AddResult(new_turn_ids=["t3"], error="x")))
    report = SleepReport(decisions={"update": 2, "delete": 1, "ignore": 0}, superseded=2)
    metrics.observe(CallRecord("sleep", None, 1.0, report))
    metrics.observe(CallRecord("get", "alice", 0.01, error=NotFoundError("summary", "sum-1")))

    assert _value(metrics, "hymem_asks_total", path="deep", escalation_reason="verdict") == 1
    assert _value(metrics, "hymem_model_tokens_total", role="select", type="prompt") == 30
    assert _value(metrics, "hymem_model_calls_total", role="select") == 2
    assert _value(metrics, "hymem_model_retries_total", role="select") == 1
    assert _value(metrics, "hymem_write_turns_total") == 3
    assert _value(metrics, "hymem_write_segments_total") == 1
    assert _value(metrics, "hymem_write_summaries_total") == 2
    assert _value(metrics, "hymem_write_summarise_failures_total") == 1
    assert _value(metrics, "hymem_write_commit_duration_seconds_count") == 1  # the flush only
    assert _value(metrics, "hymem_write_commit_duration_seconds_sum") == 0.5
    assert _value(metrics, "hymem_sleep_decisions_total", decision="update") == 2
    assert _value(metrics, "hymem_sleep_decisions_total", decision="delete") == 1
    assert _value(metrics, "hymem_sleep_changes_total", change="superseded") == 2
    assert _value(metrics, "hymem_sleep_runs_total", dry_run="false") == 1
    assert _value(metrics, "hymem_calls_total", operation="get", outcome="NotFoundError") == 1
    assert _value(metrics, "hymem_calls_total", operation="ask", outcome="ok") == 1
    assert _value(metrics, "hymem_call_duration_seconds_count", operation="get") == 1


def test_two_metrics_never_share_a_registry() -> None:
    first, second = Metrics(), Metrics()
    first.observe(CallRecord("search", "alice", 0.01, []))
    assert _value(first, "hymem_calls_total", operation="search", outcome="ok") == 1
    assert _value(second, "hymem_calls_total", operation="search", outcome="ok") == 0


class _Store:
    read_only = False

    def __init__(self) -> None:
        self.counted = 0

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        self.counted += 1
        keys = ("turns", "pending_turns", "segments", "summaries", "active_summaries", "traces")
        return dict.fromkeys(keys, self.counted)

    def users(self) -> list[str]:
        return ["alice", "bob"]


class _Memory:
    def __init__(self) -> None:
        self.closed = False
        self._store = _Store()

    def store(self) -> _Store:
        """What `hymem.api.internals.served(...).store` is: the store, or closed."""
        if self.closed:
            raise StoreClosedError("closed")
        return self._store


def test_store_sizes_are_counted_once_per_ttl_and_kept_through_a_failure() -> None:
    now = [100.0]
    memory = _Memory()
    registry = CollectorRegistry()
    registry.register(StoreCollector(memory.store, ttl_s=15.0, clock=lambda: now[0]))
    assert memory._store.counted == 0  # registering counts nothing
    assert registry.get_sample_value("hymem_store_turns") == 1
    assert registry.get_sample_value("hymem_store_users") == 2
    now[0] += 10
    assert registry.get_sample_value("hymem_store_turns") == 1  # cached
    assert registry.get_sample_value("hymem_store_sizes_age_seconds") == 10
    now[0] += 10
    assert registry.get_sample_value("hymem_store_pending_turns") == 2  # counted again
    memory.closed = True
    now[0] += 20
    scraped = {s.name: s.value for family in registry.collect() for s in family.samples}
    assert scraped["hymem_store_segments"] == 2  # the last good count, 20 s old
    assert scraped["hymem_store_sizes_age_seconds"] == 20
    assert scraped["hymem_store_size_errors_total"] == 1
    assert "hymem_replica_lag_seconds" not in scraped


def _probe(status: int | None, seen: list[httpx.Request], **config: Any) -> ModelProbe:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if status is None:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(status, json={"data": []})

    settings = {"llm": "openai:m", "llm_base_url": "http://models.internal:8000/v1", **config}
    cfg = MemoryConfig.defaults(**settings)
    return ModelProbe(cfg, transport=httpx.MockTransport(answer), ttl_s=0)


@pytest.mark.parametrize(
    ("status", "ok", "says"),
    [
        (200, True, "answers"),
        (404, True, "answers"),  # no /models route, but the server is there
        (501, True, "answers"),
        (401, False, "refused the key"),
        (503, False, "failing"),
        (None, False, "did not answer"),
    ],
)
def test_a_model_server_reads_as_ready_or_not(status: int | None, ok: bool, says: str) -> None:
    seen: list[httpx.Request] = []
    check = _probe(status, seen, llm_api_key="sk-secret").check()
    assert check.ok is ok and says in check.detail
    assert "sk-secret" not in check.detail and "models.internal" not in check.detail
    assert str(seen[0].url) == "http://models.internal:8000/v1/models"
    assert seen[0].headers["authorization"] == "Bearer sk-secret"


def test_the_model_answer_is_cached_and_extractive_asks_nothing() -> None:
    seen: list[httpx.Request] = []
    now = [0.0]
    probe = _probe(200, seen)
    probe._ttl_s, probe._clock = 5.0, lambda: now[0]
    probe.check()
    probe.check()
    assert len(seen) == 1
    now[0] = 6.0
    probe.check()
    assert len(seen) == 2
    assert _probe(200, seen, llm="extractive").check().ok
    assert len(seen) == 2
