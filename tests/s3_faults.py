"""A fault-injecting reverse proxy in front of an S3 endpoint (moto), for retry tests.

Every request is forwarded verbatim (method, path, headers including Host, ETag, If-Match,
If-None-Match, Range and the signed ones, body) and the answer comes back verbatim, unless the
proxy is told to fail: then it answers 503 with S3's own `SlowDown` error, which object stores
retry. Use its `endpoint` in place of `aws_endpoint`.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message>"
    b"<RequestId>hymem-flaky-proxy</RequestId></Error>"
)
# Hop-by-hop headers belong to one connection, never forwarded (RFC 9110 section 7.6.1).
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade"}
)


class FlakyProxy:
    """Forwards to `upstream`; `fail_next(n)` / `fail_for(s)` make it answer 503 SlowDown."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or 80
        self._lock = threading.Lock()
        self._fail_left = 0
        self._fail_until = 0.0
        self._lose: tuple[str, str, int] | None = None  # (method, path part, how many left)
        self._then_fail_for = 0.0
        self._outage_after: tuple[int, float] | None = None
        self.lost = 0
        self.seen = 0
        self.failed = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="flaky-proxy", daemon=True
        )
        self._thread.start()

    def fail_next(self, n: int) -> None:
        """Answer the next `n` requests with 503."""
        with self._lock:
            self._fail_left = n

    def fail_for(self, seconds: float) -> None:
        """Answer every request with 503 for `seconds` from now."""
        with self._lock:
            self._fail_until = time.monotonic() + seconds

    def lose_answers(
        self, method: str, path_part: str, n: int = 1, *, then_fail_for: float = 0.0
    ) -> None:
        """Forward the next `n` requests of `method` whose path holds `path_part`, then answer
        503 instead of the server's answer: the request took effect, the client cannot know.
        `then_fail_for`: from the first such request on, fail every request for that long (an
        outage that began just after the request landed)."""
        with self._lock:
            self._lose = (method, path_part, n)
            self._then_fail_for = then_fail_for

    def should_lose(self, method: str, path: str) -> bool:
        """True when this forwarded request's answer must be replaced by a 503."""
        with self._lock:
            if self._lose is None:
                return False
            want, part, left = self._lose
            if method != want or part not in path or left <= 0:
                return False
            self._lose = (want, part, left - 1)
            self.lost += 1
            if self._then_fail_for > 0:
                self._fail_until = time.monotonic() + self._then_fail_for
                self._then_fail_for = 0.0
            return True

    def fail_after(self, n: int, seconds: float) -> None:
        """Forward the next `n` requests, then answer every request with 503 for `seconds`
        (an outage that begins at a chosen step of whatever runs next)."""
        with self._lock:
            self._outage_after = (self.seen + n, seconds)

    def heal(self) -> None:
        """Forward everything again."""
        with self._lock:
            self._fail_left = 0
            self._fail_until = 0.0
            self._lose = None
            self._outage_after = None

    def should_fail(self) -> bool:
        """Count one request; True when it must be answered with 503."""
        with self._lock:
            self.seen += 1
            if self._outage_after is not None and self.seen > self._outage_after[0]:
                self._fail_until = time.monotonic() + self._outage_after[1]
                self._outage_after = None
            fail = self._fail_left > 0 or time.monotonic() < self._fail_until
            if self._fail_left > 0:
                self._fail_left -= 1
            self.failed += fail
            return fail

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FlakyProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request body, whether sized by Content-Length or sent chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


def _handler_for(proxy: FlakyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: tests read the counters instead

        def _relay(self) -> None:
            body = _read_body(self)
            if proxy.should_fail():
                self._answer(503, [("Content-Type", "application/xml")], SLOW_DOWN)
                return
            conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=30)
            try:
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                        conn.putheader(name, value)
                if body or self.command in ("PUT", "POST"):
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                resp = conn.getresponse()
                data = resp.read()
                if proxy.should_lose(self.command, self.path):
                    self._answer(503, [("Content-Type", "application/xml")], SLOW_DOWN)
                    return
                headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP]
                self._answer(resp.status, headers, data)
            finally:
                conn.close()

        def _answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
            self.send_response_only(status)
            has_length = False
            for name, value in headers:
                if name.lower() == "content-length":
                    has_length = True
                    if self.command != "HEAD":
                        value = str(len(data))
                self.send_header(name, value)
            if not has_length:
                self.send_header("Content-Length", str(0 if self.command == "HEAD" else len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _relay

    return Handler
