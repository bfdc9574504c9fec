"""Issue #33, part 2: `/metrics` scraped over real HTTP after a scripted workload (adds, flushes,
a light ask and one that escalates, a sleep, a few errors) against a scripted model server; the
parsed values must equal what the workload's answers and the model server reported. Then who
may scrape, `--metrics-port`, and that no label carries a user or record id."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hymem import Memory, MemoryConfig
from hymem.cli import app as cli_app
from hymem.embed.embedders import HashingEmbedder
from hymem.ops.metrics import Metrics
from hymem.serve.metrics_http import installed_metrics, start_metrics_server
from hymem.testing import served
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from tests.doubles import scripted_config, summarise_reply
from tests.fixtures_serve import Served
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

A, B, ADMIN = ({"Authorization": f"Bearer {k}"} for k in ("ka", "kb", "kadmin"))
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    """Every sample of a scrape, keyed by (name, sorted labels)."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every series of `name` whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, lab), v in samples.items() if n == name and want <= set(lab))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _script(server: ScriptedLLMServer) -> None:
    server.add_rule(role="summarise", reply=summarise_reply)
    server.add_rule(
        role="light_answer", match="Where do I live", reply={"answer": "Porto", "complete": True}
    )
    server.add_rule(role="light_answer", reply={"answer": "?", "complete": False})
    server.add_rule(role="select", reply={"ids": []})
    server.add_rule(role="deep_answer", reply={"answer": "a nurse"})
    server.add_rule(role="reflect", reply={"complete": True, "new_question": None})
    server.add_rule(
        role="update", reply={"action": "ignore", "text": None, "evidence_id": None, "reason": "-"}
    )


def _workload(http: httpx.Client) -> dict[str, Any]:
    """The scripted workload; returns what its answers said, to compare the scrape with."""
    said = [
        ("alice", A, "I live in Porto by the river."),
        ("alice", A, "I work as a nurse at the city hospital."),
        ("bob", B, "I sail on Sundays."),
    ]
    writes = []
    for user, key, text in said:
        body = {"user_id": user, "messages": [{"role": "user", "content": text}]}
        writes.append(http.post("/v1/memories", json=body, headers=key).json())
    for user, key in (("alice", A), ("bob", B)):
        writes.append(http.post("/v1/memories/flush", json={"user_id": user}, headers=key).json())
    asks = [
        http.post("/v1/ask", json={"user_id": "alice", "question": q}, headers=A).json()
        for q in ("Where do I live?", "What is my job?")
    ]
    sleep = http.post("/v1/sleep", json={"user_id": "alice"}, headers=A).json()
    assert http.get("/v1/memories/sum-nope", params={"user_id": "alice"}, headers=A).status_code
    big = {"user_id": "alice", "messages": [{"role": "user", "content": "x" * 5000}]}
    assert http.post("/v1/memories", json=big, headers=A).status_code == 413
    assert http.post("/v1/search", json={"user_id": "alice", "query": "x"}).status_code == 401
    return {"writes": writes, "asks": asks, "sleep": sleep}


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict, Samples]]:
    """One server, one workload, one scrape, shared by this module's tests."""
    folder = tmp_path_factory.mktemp("metrics") / "m"
    with ScriptedLLMServer() as llm:
        _script(llm)
        config = scripted_config(
            llm, embedder="hashing", consolidate_on_write=False, sleep_similarity_floor=0.01
        )
        srv = Served(
            Memory(folder, config=config, embedder=HashingEmbedder(64)), max_body_bytes=4000
        )
        try:
            done = _workload(srv.http)
            done["llm_usage"] = llm.usage_totals()
            done["summarise_requests"] = len(llm.requests_for("summarise"))
            done["stats"] = srv.server.config.app.state.hymem.memory.stats()
            scrape = srv.http.get("/metrics", headers=ADMIN)
            assert scrape.status_code == 200, scrape.text
            assert scrape.headers["content-type"].startswith("text/plain")
            yield srv, done, parse(scrape.text)
        finally:
            srv.stop()


def test_calls_asks_and_the_write_path_match_the_workload(scraped: Any) -> None:
    _, done, samples = scraped
    assert value(samples, "hymem_calls_total", operation="add", outcome="ok") == 3
    assert value(samples, "hymem_calls_total", operation="flush", outcome="ok") == 2
    assert value(samples, "hymem_calls_total", operation="get", outcome="NotFoundError") == 1
    assert value(samples, "hymem_call_duration_seconds_count", operation="ask") == 2
    paths = {(a["path"], a["escalation_reason"]) for a in done["asks"]}
    assert paths == {("light", None), ("deep", "verdict")}
    assert value(samples, "hymem_asks_total", path="light", escalation_reason="none") == 1
    assert value(samples, "hymem_asks_total", path="deep", escalation_reason="verdict") == 1
    writes = done["writes"]
    assert value(samples, "hymem_write_turns_total") == sum(len(w["new_turn_ids"]) for w in writes)
    segments = sum(len(w["segments_written"]) for w in writes)
    assert segments >= 2 and value(samples, "hymem_write_segments_total") == segments
    committing = sum(1 for w in writes if w["segments_written"])
    assert value(samples, "hymem_write_commit_duration_seconds_count") == committing


def test_model_usage_matches_what_the_model_server_reported(scraped: Any) -> None:
    _, done, samples = scraped
    usage = done["llm_usage"]
    assert usage["prompt_tokens"] > 0
    assert total(samples, "hymem_model_tokens_total", type="prompt") == usage["prompt_tokens"]
    completion = total(samples, "hymem_model_tokens_total", type="completion")
    assert completion == usage["completion_tokens"]
    summarise_calls = value(samples, "hymem_model_calls_total", role="summarise")
    assert summarise_calls == done["summarise_requests"] >= 1
    assert value(samples, "hymem_model_calls_total", role="deep_answer") == 1


def test_sleep_decisions_and_store_sizes(scraped: Any) -> None:
    _, done, samples = scraped
    decisions = done["sleep"]["decisions"]
    assert sum(decisions.values()) >= 1  # the scripted model was asked (and said ignore)
    for decision, count in decisions.items():
        assert value(samples, "hymem_sleep_decisions_total", decision=decision) == count
    assert value(samples, "hymem_sleep_runs_total", dry_run="false") == 1
    stats = done["stats"]
    assert value(samples, "hymem_store_users") == 2
    assert value(samples, "hymem_store_pending_turns") == stats["pending_turns"] == 0
    assert value(samples, "hymem_store_summaries") == stats["summaries"] >= 2
    assert value(samples, "hymem_store_segments") == stats["segments"]
    assert not any(name == "hymem_replica_lag_seconds" for name, _ in samples)  # a folder


def test_http_requests_are_counted_by_route_template_and_status(scraped: Any) -> None:
    _, _, samples = scraped
    post = {"method": "POST"}
    assert value(samples, "hymem_http_requests_total", **post, route="/v1/memories", status="200")
    assert value(samples, "hymem_http_requests_total", **post, route="/v1/memories", status="413")
    assert value(samples, "hymem_http_requests_total", **post, route="/v1/search", status="401")
    got = {"method": "GET", "route": "/v1/memories/{memory_id}", "status": "404"}
    assert value(samples, "hymem_http_requests_total", **got) == 1
    ask = {"method": "POST", "route": "/v1/ask", "status": "200"}
    assert value(samples, "hymem_http_request_duration_seconds_count", **ask) == 2
    labels = {v for (_, lab), _v in samples.items() for _, v in lab}
    assert not {v for v in labels if "alice" in v or "bob" in v or "sum-" in v}


def test_metrics_need_a_key_for_every_user(scraped: Any) -> None:
    srv, _, _ = scraped
    assert srv.http.get("/metrics").status_code == 401
    denied = srv.http.get("/metrics", headers=A)
    assert denied.status_code == 403 and denied.json()["error"] == "Forbidden"
    openmetrics = srv.http.get(
        "/metrics", headers={**ADMIN, "Accept": "application/openmetrics-text"}
    )
    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")


def test_the_metrics_port_serves_the_same_registry_without_a_key(scraped: Any) -> None:
    srv, _, samples = scraped
    port = free_port()
    stop = start_metrics_server(
        installed_metrics(srv.server.config.app).registry, "127.0.0.1", port
    )
    try:
        other = parse(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text)
    finally:
        stop()
    for name in ("hymem_write_turns_total", "hymem_store_users"):
        assert value(other, name) == value(samples, name)


def test_serve_metrics_port_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hymem serve --metrics-port N` scrapes without a key while the API runs; the port is
    closed again once the server stops."""
    port = free_port()
    seen: dict[str, Any] = {}

    def run(api: Any, **_: Any) -> None:  # stands in for uvicorn: the API is not needed here
        seen["scrape"] = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
        api.state.hymem.memory.close()

    monkeypatch.setattr(uvicorn, "run", run)
    args = ["serve", "--store", str(tmp_path / "m"), "--open", "--embedder", "hashing"]
    res = CliRunner().invoke(cli_app, [*args, "--llm", "extractive", "--metrics-port", str(port)])
    assert res.exit_code == 0, res.output
    assert seen["scrape"].status_code == 200 and "hymem_info{" in seen["scrape"].text
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_replica_lag_on_an_object_store(s3_store: Any, tmp_path: Path) -> None:
    """Seconds since this worker's replica last caught up: small after open, growing while
    idle, small again after a catch-up (`Memory.refresh`)."""
    config = MemoryConfig.defaults(llm="extractive", cache_dir=str(tmp_path / "cache"))
    options = s3_store.storage_options
    embedder = HashingEmbedder(64)
    with Memory(s3_store.uri, storage_options=options, embedder=embedder, config=config) as mem:
        registry = Metrics(served(mem)).registry
        first = registry.get_sample_value("hymem_replica_lag_seconds")
        assert first is not None and 0 <= first < 30  # caught up on open
        time.sleep(0.2)
        idle = registry.get_sample_value("hymem_replica_lag_seconds")
        assert idle is not None and idle >= first + 0.2
        mem.refresh()
        after = registry.get_sample_value("hymem_replica_lag_seconds")
        assert after is not None and after < idle
        assert registry.get_sample_value("hymem_store_users") == 0
