"""`hymem serve` (the REST API), `hymem mcp` (the MCP server) and `hymem keys new`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, LlmOpt, StorePath, app, open_memory
from hymem.cli.help import HymemTyper
from hymem.core.errors import ConfigError

if TYPE_CHECKING:
    from hymem.serve.auth import KeyRing

keys_app = HymemTyper(help="API keys of `hymem serve`.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")

KeysOpt = Annotated[
    Path | None, typer.Option("--keys", help="keys file: '<sha256 of key> <user or prefix*>' lines")
]


def load_keys(keys: Path | None, *, open_mode: bool, host: str) -> KeyRing:
    """The key ring from --keys and HYMEM_API_KEYS; no key at all is refused unless --open
    (and --open only on a loopback address)."""
    from hymem.serve.auth import KeyRing, is_loopback

    ring = KeyRing()
    if keys is not None:
        ring = ring.merged(KeyRing.from_file(keys))
    spec = os.environ.get("HYMEM_API_KEYS", "")
    if spec.strip():
        ring = ring.merged(KeyRing.from_env(spec))
    if open_mode and not is_loopback(host):
        raise ConfigError(f"--open serves without keys: refused on {host}; bind to 127.0.0.1")
    if not ring and not open_mode:
        raise ConfigError("no API keys: pass --keys FILE or set HYMEM_API_KEYS (or --open locally)")
    return ring


@app.command("serve")
def serve_cmd(
    store: StorePath = DEFAULT_STORE,
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8765,
    keys: KeysOpt = None,
    open_mode: Annotated[
        bool, typer.Option("--open", help="no keys: local development only (loopback)")
    ] = False,
    max_body_bytes: Annotated[int, typer.Option(help="largest request body")] = 1 << 20,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(help="also serve /metrics on this port, same host, without a key"),
    ] = None,
) -> None:
    """Serve the memory over HTTP (OpenAPI docs at /docs); this process is its one writer."""
    import uvicorn
    from hymem.serve.app import create_app
    from hymem.serve.metrics_http import installed_metrics, start_metrics_server

    ring = load_keys(keys, open_mode=open_mode, host=host)
    memory = open_memory(store, llm=llm, embedder=embedder, create=None)
    api = create_app(memory, ring, open_mode=open_mode, max_body_bytes=max_body_bytes)
    stop_metrics = None
    if metrics_port is not None:
        stop_metrics = start_metrics_server(installed_metrics(api).registry, host, metrics_port)
        typer.echo(f"hymem: metrics on http://{host}:{metrics_port}/metrics", err=True)
    typer.echo(f"hymem: serving {store} on http://{host}:{port} (docs at /docs)", err=True)
    try:
        uvicorn.run(api, host=host, port=port, log_level="warning", timeout_graceful_shutdown=30)
    finally:
        if stop_metrics is not None:
            stop_metrics()


@keys_app.command("new")
def keys_new(
    user: Annotated[str, typer.Option("--user", "-u", help="a user id, or a prefix ending in *")],
    keys: Annotated[Path, typer.Option("--keys", help="keys file to append the hash to")],
) -> None:
    """Create an API key for a user (or prefix*), store its hash, print the key once."""
    from hymem.serve.auth import append_key

    typer.echo(append_key(keys, user))


__all__ = ["keys_new", "load_keys", "serve_cmd"]
