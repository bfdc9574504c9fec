"""`hymem serve` exports its spans over OTLP/HTTP when the operator asks for it with the
standard variables (FastAPI sets the SDK up from OTEL_* when FASTAPI_OTEL_AUTO_CONFIGURE=true):
the request span and hymem's own reach a local collector stand-in, in one trace. And the
docs' SDK example (docs/operations.md) runs as written."""

from __future__ import annotations

import ast
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.doc_blocks import DOCS, blocks

pytestmark = pytest.mark.integration


class Collector(http.server.ThreadingHTTPServer):
    """Accepts OTLP/HTTP protobuf posts and keeps each decoded export request."""

    def __init__(self) -> None:
        self.exports: list[ExportTraceServiceRequest] = []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path == "/v1/traces":
            self.server.exports.append(ExportTraceServiceRequest.FromString(body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


_SERVE = [sys.executable, "-m", "hymem.cli", "serve"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_exports_request_and_memory_spans_over_otlp(tmp_path: Path) -> None:
    collector = Collector()
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    port = _free_port()
    env = {
        **os.environ,
        "FASTAPI_OTEL_AUTO_CONFIGURE": "true",
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server_port}",
        "OTEL_SERVICE_NAME": "hymem-test",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "HYMEM_EMBEDDER": "hashing",
    }
    (tmp_path / "m").mkdir()
    server = subprocess.Popen(
        [*_SERVE, "--store", str(tmp_path / "m"), "--port", str(port), "--open"],
        env=env,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
                time.sleep(0.1)
        reply = httpx.post(f"{url}/v1/search", json={"query": "x", "user_id": "u"}, timeout=30)
        assert reply.status_code == 200
    finally:
        server.terminate()  # shutdown flushes the span processor
        server.wait(30)
    collector.shutdown()
    spans = [
        (resource.resource, span)
        for export in collector.exports
        for resource in export.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    by_name = {span.name: span for _, span in spans}
    assert {"POST /v1/search", "hymem.search"} <= set(by_name)
    assert by_name["hymem.search"].trace_id == by_name["POST /v1/search"].trace_id
    services = {
        a.value.string_value for r, _ in spans for a in r.attributes if a.key == "service.name"
    }
    assert services == {"hymem-test"}


def test_readme_tracing_example_runs_as_written(tmp_path: Path) -> None:
    """The docs' SDK example, in its own process (one global provider per process). The
    hashing embedder, through the environment the example's `Memory` reads, spares the
    process a MiniLM load: the spans are what this checks."""
    (code,) = blocks("## Tracing", page=DOCS / "operations.md")
    env = {**os.environ, "HYMEM_EMBEDDER": "hashing"}
    ran = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    names = set(ast.literal_eval(ran.stdout.strip().splitlines()[-1]))
    assert {"hymem.add", "hymem.flush", "hymem.ask", "hymem.commit", "hymem.light"} <= names
