"""The operating routes: `/readyz` (readiness, no key) and `/metrics` (Prometheus, admin key),
and `install_ops`, which `create_app` calls to wire them and the HTTP metrics in.

Probes answer without a key because orchestrators call them and hold none; what they say (the
store is open, the embedder loaded, the model server answers) is no tenant's data, and the
details name no address or secret. `/metrics` aggregates over every user (store sizes, call
counts), so it needs a key bound to every user (`*`), as sleeping every user does; scrapers
without one use `hymem serve --metrics-port` instead (`metrics_http.start_metrics_server`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from hymem.api.internals import served
from hymem.api.memory import Memory
from hymem.ops.metrics import Metrics
from hymem.ops.readiness import Readiness, ReadyCheck, not_ready_message
from hymem.serve.errors import ERROR_RESPONSES, ErrorBody
from hymem.serve.metrics_http import HttpMetrics
from hymem.serve.routes import ALL_USERS, Caller, Denied
from pydantic import BaseModel

ops_router = APIRouter()
# /metrics' media type, documented by hand: a text `response_class` would document every
# error answer as text too, and the default (JSON) would add a JSON 200.
TEXT = {"content": {"text/plain": {"schema": {"type": "string"}}}}
WARMUP_WAIT_S = 0.5  # at startup: a fast embedder is ready before the first probe


class ReadyStatus(BaseModel):
    """`/readyz` when ready: every check passed."""

    ready: bool
    checks: dict[str, ReadyCheck]


class NotReady(ErrorBody):
    """`/readyz` when not ready (503): hymem's error shape, plus every check and its reason."""

    ready: bool = False
    checks: dict[str, ReadyCheck]


@ops_router.get(
    "/readyz",
    response_model=ReadyStatus,
    responses={503: {"model": NotReady, "description": "not ready; each check says why"}},
)
def readyz(request: Request) -> Any:
    """Ready to serve: the store is open, the journal settled, the embedder loaded, the model
    server answering (when an `openai:` model is configured). No key needed."""
    checks = request.app.state.hymem_readiness.checks()
    if all(check.ok for check in checks.values()):
        return ReadyStatus(ready=True, checks=checks)
    body = NotReady(error="NotReady", message=not_ready_message(checks), checks=checks)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=503)


@ops_router.get(
    "/metrics",
    response_class=Response,
    response_model=None,
    responses={200: {"description": "Prometheus text (OpenMetrics on request)", **TEXT}},
)
def metrics(request: Request, key: Caller) -> Response:
    """Prometheus metrics of this server; a key bound to every user (`*`) is required."""
    if key != ALL_USERS:
        raise Denied(403, "metrics cover every user: an admin key (bound to '*') is required")
    exposition = request.app.state.hymem_metrics.exposition
    body, content_type = exposition(request.headers.get("accept"))
    return Response(body, media_type=content_type)


def install_ops(app: FastAPI, memory: Memory) -> Metrics:
    """Metrics observing `memory` and the app's requests, `/readyz` and `/metrics`; starts
    warming the embedder. Called once the app's other middleware is added, so the request
    metrics also see what that middleware answers (413)."""
    parts = served(memory)
    metrics = Metrics(parts)
    memory.observers.add(metrics)
    readiness = Readiness(parts)
    readiness.start()
    readiness.warmup.wait(WARMUP_WAIT_S)
    app.state.hymem_metrics = metrics
    app.state.hymem_readiness = readiness
    app.include_router(ops_router, responses=ERROR_RESPONSES)
    app.add_middleware(HttpMetrics, metrics=metrics, routes=lambda: app.router.routes)
    return metrics


__all__ = ["NotReady", "ReadyStatus", "install_ops", "ops_router"]
