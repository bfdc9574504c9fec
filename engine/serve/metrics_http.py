"""HTTP metrics of the REST server, and `/metrics` on a port of its own.

`HttpMetrics` is a plain ASGI middleware (no `BaseHTTPMiddleware`: nothing to buffer) that
counts and times every request by method, route template and status code. The route label is
the matched route's template (`/v1/memories/{memory_id}`, the `http.route` of the
OpenTelemetry conventions), never the raw path: a raw path holds user ids and record ids, and
would make one time series per user. Methods outside the usual few become `other` and paths
no route matches `unmatched`, so a client cannot grow the label set either.

`start_metrics_server` is `hymem serve --metrics-port`: prometheus-client's own small HTTP
server on a second port, no key asked, for scrapers that are kept off the API port.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import fastapi.routing
from hymem.core.errors import ConfigError
from hymem.ops.metrics import Metrics
from hymem.serve.routes import IdRoute, sent_path
from prometheus_client import CollectorRegistry, start_http_server
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"


def route_label(routes: Iterable[BaseRoute], scope: Scope) -> str:
    """The template of the route that answers (or would have answered) this request, routes
    of included routers with their prefix; a route that matched the path but not the method
    (405) counts. Matched here, on the scope as it arrives, rather than read from what
    routing leaves in it: some requests are answered before routing (a body over the limit),
    and FastAPI's recorded route holds its template without its router's prefix. Id routes
    are matched on the path as sent, as they are when routed (`IdRoute`)."""
    partial: str | None = None
    sent = {**scope, "path": sent_path(scope)}
    for route in flat_routes(routes):
        by_id = isinstance(getattr(route, "original_route", route), IdRoute)
        match, _ = route.matches(sent if by_id else scope)
        template = getattr(route, "path", None)
        if match is Match.NONE or not isinstance(template, str):
            continue
        if match is Match.FULL:
            return template
        if partial is None:
            partial = template
    return partial or UNMATCHED


def flat_routes(routes: Iterable[BaseRoute]) -> list[Any]:
    """The app's routes with included routers expanded: FastAPI 0.16x keeps an included
    router as one lazy entry (`iter_route_contexts` expands it); older FastAPI copied its
    routes in, already flat."""
    expand = getattr(fastapi.routing, "iter_route_contexts", None)
    return list(expand(list(routes))) if expand is not None else list(routes)


def method_label(method: str) -> str:
    return method if method in METHODS else "other"


class HttpMetrics:
    """Counts, times and tracks in-flight HTTP requests into `metrics`; `routes` is read at
    each request, so routes added after the middleware are labelled too."""

    def __init__(
        self, app: ASGIApp, *, metrics: Metrics, routes: Callable[[], Iterable[BaseRoute]]
    ) -> None:
        self.app = app
        self._metrics = metrics
        self._routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # an exception before any response is answered 500 by the server

        async def send_seeing_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        # Matched before the app runs: routing rewrites the scope (a mount's root_path).
        route = route_label(self._routes(), scope)
        metrics = self._metrics
        metrics.http_in_flight.inc()
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send_seeing_status)
        finally:
            seconds = time.perf_counter() - started
            metrics.http_in_flight.dec()
            labels = (method_label(str(scope.get("method", ""))), route, str(status))
            metrics.http_requests.labels(*labels).inc()
            metrics.http_seconds.labels(*labels).observe(seconds)


def start_metrics_server(registry: CollectorRegistry, host: str, port: int) -> Callable[[], None]:
    """Serve `registry` on http://host:port/metrics (prometheus-client's server, in a daemon
    thread; it answers any path, /metrics is the one documented). Returns its stop."""
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise ConfigError(f"cannot serve metrics on {host}:{port}: {exc}") from exc

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(5)

    return stop


def installed_metrics(app: Any) -> Metrics:
    """The `Metrics` that `create_app` installed on `app`."""
    metrics = app.state.hymem_metrics
    assert isinstance(metrics, Metrics)
    return metrics


__all__ = [
    "UNMATCHED",
    "HttpMetrics",
    "flat_routes",
    "installed_metrics",
    "method_label",
    "route_label",
    "start_metrics_server",
]
