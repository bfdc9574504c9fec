"""The latency proxy's routed mode: HTTP/1.1 requests spread over several S3 servers by shard.

One moto server is one Python process, so under its interpreter lock it answers ~150 requests a
second on this machine: below what 4 or 8 hymem workers on a 16-shard store ask of it. Real S3
spreads a bucket's prefixes over many servers; this router does the same for a sharded store
(`<uri>/shards/NN/...`): a request whose key or listing prefix names shard NN goes to server
NN mod N, anything else (the store's manifest, an unsharded store) to server 0. A shard's
objects therefore live on one server, so every listing of a shard's prefix sees them all.

Unlike the byte-level mode this one parses each request (its head, then a body delimited by
Content-Length or chunked encoding, as the Rust object_store client sends) and each response,
because consecutive requests on one client connection may go to different servers. Each
request waits `delay_s` before it is sent on, as in the byte-level mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

HEAD_LIMIT = 1 << 20  # bytes of request or response head accepted
SHARD = re.compile(rb"shards(?:/|%2F)(\d+)(?:/|%2F|\s|$)", re.IGNORECASE)


def server_for(target: bytes, servers: int) -> int:
    """Which server a request target (path and query) belongs to."""
    m = SHARD.search(target)
    return int(m.group(1)) % servers if m else 0


def header_fields(head: bytes) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            fields[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    return fields


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    """A request or response head, through its blank line; None at a clean end of stream."""
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None


async def read_body(reader: asyncio.StreamReader, fields: dict[str, str]) -> bytes | None:
    """The body as sent (chunked framing kept); None when it runs to the end of the stream."""
    if "chunked" in fields.get("transfer-encoding", "").lower():
        parts: list[bytes] = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            parts.append(size_line)
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    parts.append(trailer)
                parts.append(b"\r\n")
                return b"".join(parts)
            parts.append(await reader.readexactly(size + 2))  # the chunk and its CRLF
    if "content-length" in fields:
        return await reader.readexactly(int(fields["content-length"]))
    return None


class Upstreams:
    """One client connection's connections to the servers, opened on first use."""

    def __init__(self, targets: list[tuple[str, int]]) -> None:
        self.targets = targets
        self.open: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}

    async def send(self, index: int, request: bytes) -> tuple[asyncio.StreamReader, bytes]:
        """Send one whole request and read its response head; a kept-alive connection the
        server closed meanwhile is reopened once and the request sent again."""
        for attempt in (0, 1):
            if index not in self.open:
                self.open[index] = await asyncio.open_connection(*self.targets[index])
            reader, writer = self.open[index]
            try:
                writer.write(request)
                await writer.drain()
                head = await read_head(reader)
            except (ConnectionError, asyncio.IncompleteReadError):
                head = None
            if head is not None:
                return reader, head
            self.drop(index)
            if attempt:
                raise ConnectionError(f"server {self.targets[index]} closed the connection")
        raise AssertionError("unreachable")

    def drop(self, index: int) -> None:
        _, writer = self.open.pop(index)
        with contextlib.suppress(Exception):
            writer.close()

    def close(self) -> None:
        for index in list(self.open):
            self.drop(index)


async def relay(
    client_r: asyncio.StreamReader,
    client_w: asyncio.StreamWriter,
    targets: list[tuple[str, int]],
    delay_s: float,
    count: Any,
) -> None:
    """Serve one client connection, request by request, until it closes."""
    upstreams = Upstreams(targets)
    try:
        while (head := await read_head(client_r)) is not None:
            fields = header_fields(head)
            body = await read_body(client_r, fields) or b""
            method, target = head.split(b" ", 2)[:2]
            count(head)
            await asyncio.sleep(delay_s)
            index = server_for(target, len(targets))
            reader, answer = await upstreams.send(index, head + body)
            status = int(answer.split(b" ", 2)[1])
            got = header_fields(answer)
            bodiless = method == b"HEAD" or status in (204, 304) or 100 <= status < 200
            rest = b"" if bodiless else await read_body(reader, got)
            to_close = rest is None  # a body delimited by the server closing its connection
            if rest is None:
                rest = await reader.read()
            client_w.write(answer + rest)
            await client_w.drain()
            if to_close or got.get("connection", "").lower() == "close":
                upstreams.drop(index)
            if to_close or fields.get("connection", "").lower() == "close":
                break
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        pass
    finally:
        upstreams.close()
        with contextlib.suppress(Exception):
            client_w.close()


__all__ = ["HEAD_LIMIT", "relay", "server_for"]
