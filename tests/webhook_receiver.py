"""A local webhook receiver for the webhook tests: stdlib `http.server` on 127.0.0.1 in a
thread, answering each POST as its current `mode` says ("ok": 204, "fail": 500, "hang": no
answer until well past the sender's timeout) and recording every request it got."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

Mode = Literal["ok", "fail", "hang"]


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    status: int  # what the receiver answered (0: it hung up without answering)
    at: float


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Receiver:
    """Start with `start()` (or as a context manager); `url` is known before it starts, so a
    sender can be pointed at a receiver that is still down."""

    def __init__(self, port: int | None = None, *, mode: Mode = "ok", hang_s: float = 3.0):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.mode: Mode = mode
        self.hang_s = hang_s
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                mode = receiver.mode
                status = {"ok": 204, "fail": 500, "hang": 0}[mode]
                receiver._record(Received(dict(self.headers), body, status, time.time()))
                if mode == "hang":
                    receiver._closing.wait(receiver.hang_s)
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # quiet
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def _record(self, item: Received) -> None:
        with self._lock:
            self.received.append(item)

    def delivered(self) -> list[Received]:
        """Requests it answered 2xx."""
        with self._lock:
            return [r for r in self.received if 200 <= r.status < 300]

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[Received]:
        """Block until `count` requests were answered 2xx (or fail after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = self.delivered()
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(f"{len(self.delivered())} of {count} deliveries after {timeout_s}s")

    def close(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Received", "Receiver", "free_port"]
