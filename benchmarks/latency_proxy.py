"""A TCP proxy that makes a loopback S3 server answer like a distant one, and counts requests.

moto on 127.0.0.1 answers in well under a millisecond, so a benchmark against it measures
CPU, not the round trips that decide throughput on real S3 (10-30 ms each). This proxy sits
between hymem and the server and holds each HTTP request for `delay_ms` before passing it on.
It speaks no HTTP: with HTTP/1.1 and no pipelining (what the AWS SDKs and object_store do),
a request starts the first time the client sends after the server last answered on that
connection, so that is where it waits; the request's first word (GET, PUT, ...) is counted.

It runs in its own process (`start_proxy`), so its event loop never competes with moto's
threads for one interpreter lock; the counts come back through shared memory. Given several
servers it parses HTTP instead and routes each request by the shard it names (`http_router`).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from http_router import HEAD_LIMIT, relay

METHODS = ("GET", "HEAD", "PUT", "POST", "DELETE")  # anything else counts as OTHER
SLOTS = (*METHODS, "OTHER")


@dataclass
class Proxy:
    """A running proxy: its endpoint, its process and its shared request counters."""

    endpoint: str
    process: Any
    counts: Any  # mp.Array of len(SLOTS) ints
    lines: Any = None  # mp.Queue of request lines, when started with trace=True

    def traced(self) -> list[str]:
        """The request lines ("PUT /bucket/key HTTP/1.1") seen since the last call."""
        out: list[str] = []
        while self.lines is not None and not self.lines.empty():
            out.append(self.lines.get())
        return out

    def requests(self) -> dict[str, int]:
        with self.counts.get_lock():
            return dict(zip(SLOTS, list(self.counts), strict=True))

    def stop(self) -> None:
        self.process.terminate()
        self.process.join(10)


def _slot(first: bytes) -> int:
    word = first.split(b" ", 1)[0].decode("ascii", "replace")
    return METHODS.index(word) if word in METHODS else len(METHODS)


async def _pipe(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    state: dict[str, bool],
    *,
    upstream: bool,
    delay_s: float,
    count: Callable[[bytes], None],
) -> None:
    """Copy one direction; a client send after a server answer is a new request: wait, count."""
    try:
        while data := await reader.read(65536):
            if upstream and state["answered"]:
                state["answered"] = False
                count(data)
                await asyncio.sleep(delay_s)
            elif not upstream:
                state["answered"] = True
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def _serve(
    sock: socket.socket,
    targets: list[tuple[str, int]],
    delay_ms: float,
    counts: Any,
    lines: Any,
) -> None:
    def count(first: bytes) -> None:
        with counts.get_lock():
            counts[_slot(first)] += 1
        if lines is not None:
            lines.put(first.split(b"\r\n", 1)[0].decode("latin-1"))

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        if len(targets) > 1:
            await relay(client_r, client_w, targets, delay_ms / 1000, count)
            return
        try:
            server_r, server_w = await asyncio.open_connection(*targets[0])
        except OSError:
            client_w.close()
            return
        state = {"answered": True}
        delay_s = delay_ms / 1000
        await asyncio.gather(
            _pipe(client_r, server_w, state, upstream=True, delay_s=delay_s, count=count),
            _pipe(server_r, client_w, state, upstream=False, delay_s=delay_s, count=count),
        )

    async def main() -> None:
        server = await asyncio.start_server(handle, sock=sock, limit=HEAD_LIMIT)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def start_proxy(target_endpoint: str | list[str], delay_ms: float, *, trace: bool = False) -> Proxy:
    """A proxy process on a free loopback port in front of `target_endpoint` (http://host:port),
    or of several, between which requests are routed by shard (`http_router`); `trace` also
    keeps every request line (`Proxy.traced`)."""
    endpoints = [target_endpoint] if isinstance(target_endpoint, str) else target_endpoint
    targets = []
    for endpoint in endpoints:
        host, port = endpoint.removeprefix("http://").rstrip("/").split(":")
        targets.append((host, int(port)))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    ctx = mp.get_context("fork")  # the listening socket is inherited, so no port race
    counts = ctx.Array("q", len(SLOTS))
    lines = ctx.Queue() if trace else None
    proc = ctx.Process(target=_serve, args=(sock, targets, delay_ms, counts, lines), daemon=True)
    proc.start()
    endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()  # the child holds its own copy
    return Proxy(endpoint, proc, counts, lines)


__all__ = ["SLOTS", "Proxy", "start_proxy"]
