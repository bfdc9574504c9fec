"""`hymem mcp`: the memory of one user as an MCP server, over stdio or Streamable HTTP."""

from __future__ import annotations

import signal
from enum import StrEnum
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, LlmOpt, StorePath, app, open_memory
from hymem.core.errors import ConfigError

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from mcp.server.mcpserver import MCPServer


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


McpUserOpt = Annotated[
    str | None,
    typer.Option(
        "--user",
        "-u",
        envvar="HYMEM_MCP_USER",
        help="the one user this server reads and writes (clients cannot choose another)",
    ),
]


class _Terminated(KeyboardInterrupt):
    """SIGTERM on stdio, raised like Ctrl-C so the memory is closed on the way out."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def bound_user(user: str | None) -> str:
    """The configured user: an MCP server without one would have to trust the client's."""
    if user is None or not user.strip():
        raise ConfigError("hymem mcp serves one user: pass --user USER or set HYMEM_MCP_USER")
    return user


@app.command("mcp")
def mcp_cmd(
    store: StorePath = DEFAULT_STORE,
    user: McpUserOpt = None,
    transport: Annotated[
        Transport, typer.Option(help="stdio (spawned by an agent runtime) or Streamable HTTP")
    ] = Transport.stdio,
    host: Annotated[str, typer.Option(help="address to bind (http)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on (http)")] = 8766,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
) -> None:
    """Serve one user's memory to MCP clients; this process is the store's one writer.

    Streamable HTTP has no authentication of its own: it binds loopback by default, with the
    SDK's DNS-rebinding protection on; put an authenticating proxy in front to expose it."""
    from hymem.serve.mcp_server import build_mcp_server

    bound = bound_user(user)
    memory = open_memory(store, llm=llm, embedder=embedder, create=None)
    terminated = False
    try:
        server = build_mcp_server(memory, bound)
        if transport is Transport.http:
            typer.echo(f"hymem: MCP for {bound!r} on http://{host}:{port}/mcp", err=True)
            _serve_http(server, memory, host=host, port=port)
        else:
            terminated = _serve_stdio(server)
    except KeyboardInterrupt:  # Ctrl-C: a normal way to stop
        pass
    finally:
        memory.close()  # a no-op where the HTTP app closed it already
    if terminated:  # die of the signal, as uvicorn does: the stdin reader may still block
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)


def _serve_stdio(server: MCPServer) -> bool:
    """Serve until the client closes stdin; True if SIGTERM (how a runtime stops a server
    that lingers) ended it instead, raised like Ctrl-C so the caller still closes the memory."""
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.run("stdio")
    except _Terminated:
        return True
    return False


def _serve_http(server: MCPServer, memory: Memory, *, host: str, port: int) -> None:
    """Serve Streamable HTTP at /mcp; the app closes the memory in its graceful shutdown."""
    import uvicorn
    from hymem.serve.mcp_server import streamable_http_app

    api = streamable_http_app(server, memory, host=host)
    uvicorn.run(api, host=host, port=port, log_level="warning", timeout_graceful_shutdown=30)


__all__ = ["Transport", "bound_user", "mcp_cmd"]
