"""The REST API: one FastAPI app around one open `Memory`, the process's single writer.

Endpoints are plain functions, so FastAPI runs each in its worker thread pool: searches and asks
run side by side (the store is safe for concurrent readers), writes are serialised by the store
and the writer's own locks, and long work (flush, sleep, erase) never blocks the event loop.
On shutdown uvicorn stops accepting, waits for the requests in flight, then the lifespan closes
the Memory, so an acknowledged write is on disk before the process exits; a killed server loses
nothing acknowledged either, because `add` answers only once its turns are durable.

/docs (Swagger UI) and /redoc load their scripts, styles and icon from this server (under
`DOCS_ASSETS_URL`, bundled by fastapi-offline), never from a CDN: they work where hymem runs
with no network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from hymem.core.errors import HymemError
from hymem.core.version import __version__
from hymem.serve.auth import Binding, KeyRing
from hymem.serve.errors import ERROR_RESPONSES, RETRY_AFTER_S, WIRE_NAMES, http_error
from hymem.serve.ops_routes import install_ops
from hymem.serve.routes import Denied, Settings, Warming, router
from starlette.exceptions import HTTPException as StarletteHTTPException

if TYPE_CHECKING:
    from hymem.api.memory import Memory

DEFAULT_MAX_BODY_BYTES = 1 << 20  # 1 MiB: a few hundred messages per add
DOCS_ASSETS_URL = "/docs-assets"  # where /docs and /redoc load Swagger UI's and ReDoc's files


def create_app(
    memory: Memory,
    keys: KeyRing,
    *,
    open_mode: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    close_on_shutdown: bool = True,
) -> FastAPI:
    """`memory` is an open `hymem.Memory`; `open_mode` accepts requests without a key (local
    development only: `hymem serve` refuses it unless bound to loopback)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        if close_on_shutdown:
            memory.close()

    app: FastAPI = FastAPIOffline(
        static_url=DOCS_ASSETS_URL,
        title="hymem",
        version=__version__,
        description="Hybrid long-term memory for LLM agents. Every call is scoped to one user.",
        lifespan=lifespan,
    )
    app.state.hymem = Settings(memory, keys, open_mode=open_mode)
    app.include_router(router, responses=ERROR_RESPONSES)

    @app.exception_handler(HymemError)
    async def hymem_error(_: Request, exc: HymemError) -> JSONResponse:
        status, body, headers = http_error(exc)
        return JSONResponse(body, status_code=status, headers=headers)

    @app.exception_handler(Denied)
    async def denied(_: Request, exc: Denied) -> JSONResponse:
        kind = "Unauthorized" if exc.status == 401 else "Forbidden"
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        return JSONResponse({"error": kind, "message": str(exc)}, exc.status, headers)

    @app.exception_handler(Warming)
    async def warming(_: Request, exc: Warming) -> JSONResponse:
        body = {"error": "NotReady", "message": str(exc)}
        return JSONResponse(body, 503, {"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": e.get("loc"), "msg": e.get("msg")} for e in exc.errors()][:20]
        body = {"error": "RequestValidationError", "message": "invalid request", "detail": errors}
        return JSONResponse(body, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_exception(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # FastAPI could not parse the body (deep, bad UTF-8, ...)
            body = {"error": "RequestValidationError", "message": f"invalid request: {exc.detail}"}
            return JSONResponse(body, status_code=422)
        name = WIRE_NAMES.get(exc.status_code, "HTTPError")
        message = str(exc.detail)
        if name in ("RouteNotFound", "MethodNotAllowed"):
            route = f"{request.method} {request.url.path}"
            message = f"{message}: no route {route} on this hymem server (is base_url right?)"
        return JSONResponse(
            {"error": name, "message": message},
            status_code=exc.status_code,
            headers=dict(exc.headers or {}),
        )

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        # A bug: answered in hymem's shape, and still logged with its traceback by Starlette.
        return JSONResponse({"error": "HymemError", "message": "internal server error"}, 500)

    @app.middleware("http")
    async def limit_body(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > max_body_bytes):
            return _too_large(max_body_bytes)
        if declared is None and request.method in ("POST", "PUT", "PATCH"):
            body = b""
            async for chunk in request.stream():  # chunked: count as it arrives
                body += chunk
                if len(body) > max_body_bytes:
                    return _too_large(max_body_bytes)
            request._body = body  # read once; the route reads it from here
        return await call_next(request)

    install_ops(app, memory)  # /readyz, /metrics, request metrics: after limit_body, to see 413s
    return app


def _too_large(limit: int) -> JSONResponse:
    body = {"error": "PayloadTooLarge", "message": f"request body over {limit:,} bytes"}
    return JSONResponse(body, status_code=413)


__all__ = ["DEFAULT_MAX_BODY_BYTES", "DOCS_ASSETS_URL", "Binding", "Settings", "create_app"]
