"""The httpx transport webhook deliveries go through: it connects only to checked addresses and
ends every request within one overall deadline.

httpx's own timeouts are per operation (each connect, each read, each write), so a receiver
that answers one byte at a time, each well within the read timeout, could hold a delivery
thread for as long as it liked. Here a request gets `total_s` in all: every socket operation
it makes waits at most what is left of it, so the request ends with a timeout error within
`total_s` (plus the time of one send or receive call), whatever the receiver does.

Connecting: the host is resolved here, every address it resolves to is checked
(`hymem.core.webhook_targets.refusal`), and only those addresses are connected to, so a name
cannot pass the check with one address and be connected to at another (DNS rebinding). A
refusal raises `TargetRefused` before any connection is made. No proxy from the environment is
used (the proxy would resolve the name, unchecked), and httpx follows no redirect unless asked.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from ipaddress import ip_address
from typing import Any

import httpcore
import httpx
from hymem.core.webhook_targets import literal, refusal

Resolver = Callable[..., list[tuple[Any, ...]]]  # socket.getaddrinfo's shape

_DEADLINE: ContextVar[float | None] = ContextVar("hymem_webhook_deadline", default=None)


class TargetRefused(httpx.ConnectError):
    """The endpoint's host resolved to an address webhooks must not be sent to; nothing was
    sent (no connection was opened)."""


class _Refused(httpcore.ConnectError):
    """`TargetRefused` inside httpcore, before the transport translates it."""


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """The wait for one socket operation: its own timeout, cut to what is left of the
    request's deadline; `expired` is raised once nothing is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the webhook attempt's deadline passed")
    return left if timeout is None else min(timeout, left)


@contextmanager
def _socket_errors(timeout: type[Exception], other: type[Exception]) -> Iterator[None]:
    try:
        yield
    except TimeoutError as exc:  # socket.timeout
        raise timeout(str(exc) or "timed out") from exc
    except OSError as exc:
        raise other(str(exc)) from exc


def _readable(sock: socket.socket) -> bool:
    """Whether an idle kept-alive socket has something to read (then the server closed it)."""
    if sock.fileno() == -1:
        return True
    ready, _, _ = select.select([sock], [], [], 0)
    return bool(ready)


class _Stream(httpcore.NetworkStream):
    """A connected socket whose every operation waits at most what is left of the deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _socket_errors(httpcore.ReadTimeout, httpcore.ReadError):
            self._sock.settimeout(_left(timeout, httpcore.ReadTimeout))
            return self._sock.recv(max_bytes)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _socket_errors(httpcore.WriteTimeout, httpcore.WriteError):
            while buffer:  # not sendall: the deadline is checked between partial sends
                self._sock.settimeout(_left(timeout, httpcore.WriteTimeout))
                sent = self._sock.send(buffer)
                buffer = buffer[sent:]

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        # The socket's timeout bounds the whole handshake (CPython's ssl keeps one deadline).
        with _socket_errors(httpcore.ConnectTimeout, httpcore.ConnectError):
            try:
                self._sock.settimeout(_left(timeout, httpcore.ConnectTimeout))
                wrapped = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
            except BaseException:
                self._sock.close()
                raise
        return _Stream(wrapped)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object" and isinstance(self._sock, ssl.SSLSocket):
            return self._sock  # httpcore asks it selected_alpn_protocol(), as SSLObject does
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if info == "is_readable":
            return _readable(self._sock)
        return None


class _GuardedBackend(httpcore.NetworkBackend):
    """Resolves, checks every address, and connects to the checked ones only."""

    def __init__(self, *, allow_private: bool, resolve: Resolver) -> None:
        self._allow_private = allow_private
        self._resolve = resolve

    def _addresses(self, host: str, port: int, timeout: float | None) -> list[tuple[Any, ...]]:
        """getaddrinfo's answers for the host, within the deadline (a slow resolver counts
        against the attempt like a slow receiver)."""
        if literal(host) is not None:
            return self._resolve(host, port, type=socket.SOCK_STREAM)
        found: list[list[tuple[Any, ...]]] = []
        failed: list[BaseException] = []

        def look_up() -> None:
            try:
                found.append(self._resolve(host, port, type=socket.SOCK_STREAM))
            except BaseException as exc:  # handed to the waiting thread
                failed.append(exc)

        worker = threading.Thread(target=look_up, name="hymem-resolve", daemon=True)
        worker.start()
        worker.join(_left(timeout, httpcore.ConnectTimeout))
        if failed:
            raise failed[0]
        if not found:
            raise httpcore.ConnectTimeout(f"resolving {host} took longer than the attempt")
        return found[0]

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple[Any, ...]] | None = None,
    ) -> httpcore.NetworkStream:
        with _socket_errors(httpcore.ConnectTimeout, httpcore.ConnectError):
            infos = self._addresses(host, port, timeout)
        if not infos:
            raise httpcore.ConnectError(f"{host} resolves to no address")
        for info in infos:  # every address, before any connection: one bad answer refuses
            problem = refusal(ip_address(info[4][0]), allow_private=self._allow_private)
            if problem is not None:
                raise _Refused(problem if literal(host) is not None else f"{host}: {problem}")
        error: Exception | None = None
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                with _socket_errors(httpcore.ConnectTimeout, httpcore.ConnectError):
                    sock.settimeout(_left(timeout, httpcore.ConnectTimeout))
                    sock.connect(address)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    for option in socket_options or ():
                        sock.setsockopt(*option)
                return _Stream(sock)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                sock.close()
                error = exc
                if isinstance(exc, httpcore.ConnectTimeout):
                    break  # the deadline is spent: no time for the next address
        assert error is not None
        raise error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[tuple[Any, ...]] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks are sent over TCP only")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


# httpcore's errors as httpx's, most specific first (what httpx's own transport does).
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (_Refused, TargetRefused),
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _within(deadline: float) -> Iterator[None]:
    """Run the block under `deadline`, with httpcore's errors raised as httpx's."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    except Exception as exc:
        for source, target in _ERRORS:
            if isinstance(exc, source):
                raise target(str(exc)) from exc
        raise
    finally:
        _DEADLINE.reset(token)


class _Body(httpx.SyncByteStream):
    """The response body, read under the same deadline as the request."""

    def __init__(self, stream: Iterable[bytes], deadline: float) -> None:
        self._stream = stream
        self._deadline = deadline

    def __iter__(self) -> Iterator[bytes]:
        parts = iter(self._stream)
        while True:
            with _within(self._deadline):  # set and reset around each read, not each yield
                part = next(parts, None)
            if part is None:
                return
            yield part

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class GuardedTransport(httpx.BaseTransport):
    """Checked addresses only, and `total_s` for each whole request (connect, TLS, send,
    answer); `allow_private` lets internal addresses through (never metadata ones)."""

    def __init__(
        self,
        *,
        total_s: float,
        allow_private: bool = False,
        resolve: Resolver = socket.getaddrinfo,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._total_s = total_s
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context or httpx.create_ssl_context(),
            max_connections=4,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(allow_private=allow_private, resolve=resolve),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self._total_s
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _within(deadline):
            response = self._pool.handle_request(core)
        assert isinstance(response.stream, Iterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream, deadline),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def webhook_client(
    total_s: float, *, allow_private: bool = False, resolve: Resolver = socket.getaddrinfo
) -> httpx.Client:
    """The client one endpoint's deliveries use: the guarded transport, a request deadline
    of `total_s` in all, no redirects followed."""
    transport = GuardedTransport(total_s=total_s, allow_private=allow_private, resolve=resolve)
    return httpx.Client(transport=transport, timeout=total_s, follow_redirects=False)


__all__ = ["GuardedTransport", "Resolver", "TargetRefused", "webhook_client"]
