"""A webhook receiver that answers one byte at a time: each read comes back well within
`webhook_timeout_s`, so a per-read timeout never fires and one attempt used to stay pending as
long as the receiver cared to trickle. The whole attempt is bounded now: it ends near the
timeout, is counted as a failed attempt ("timeout") and is retried on the backoff schedule.
The receivers are raw socket servers on 127.0.0.1; the TLS ones use a certificate made here
for 127.0.0.1, so the guarded transport's TLS path (hostname checked) is exercised too."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hymem.ops.webhooks import WebhookEndpoint
from hymem.ops.webhooks.delivery import Deliverer, Policy, attempt
from hymem.ops.webhooks.events import Event
from hymem.ops.webhooks.outbox import Due, Outbox
from hymem.ops.webhooks.transport import GuardedTransport

pytestmark = pytest.mark.integration

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
TIMEOUT_S = 1.0
MARGIN_S = 0.75
ANSWER = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class Trickler:
    """Accepts connections on 127.0.0.1, reads each request's head, then writes `prefix` at
    once and the rest of `ANSWER` one byte every `every_s` (a whole answer takes ~15 s)."""

    def __init__(self, *, every_s: float = 0.25, prefix: bytes = b"") -> None:
        self.every_s = every_s
        self.prefix = prefix
        self.accepted: list[float] = []
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/hook"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Trickler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.accepted.append(time.time())
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            head = b""
            try:
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                conn.sendall(self.prefix)
                for byte in ANSWER[len(self.prefix) :]:
                    if self._stop.wait(self.every_s):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:  # the sender gave up and hung up: what the test wants
                return


def wait_until(check: object, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize(
    "prefix",
    [b"", b"HTTP/1.1 204 No Content\r\n"],  # the status line trickles; then the headers do
    ids=["status-line", "headers"],
)
def test_a_trickling_receiver_costs_one_timeout_per_attempt_then_a_retry(
    tmp_path: Path, prefix: bytes
) -> None:
    box = Outbox(tmp_path / "o.sqlite3")
    with Trickler(prefix=prefix) as rx:
        endpoint = WebhookEndpoint(url=rx.url, secret=SECRET, name="rx", allow_private_targets=True)
        box.add(Event("user.erased", "ann", {"turns": 1}), ["rx"])
        policy = Policy(timeout_s=TIMEOUT_S, max_attempts=100, backoff_s=0.05, backoff_max_s=0.1)
        deliverer = Deliverer(box, [endpoint], policy)
        deliverer.start()
        try:
            wait_until(lambda: len(rx.accepted) >= 1, 5)
            # Before the fix the first attempt was still reading the answer here (and then
            # took the trickled 204 as a delivery ~15 s later).
            wait_until(lambda: box.rows()[0]["attempts"] >= 1, TIMEOUT_S + 3)
            (row,) = box.rows()
            assert (row["state"], row["last_error"]) == ("pending", "timeout")
            wait_until(lambda: len(rx.accepted) >= 2, TIMEOUT_S + 2)  # retried, by backoff
        finally:
            deliverer.close()
    first, second = rx.accepted[:2]
    # The second connection starts after the first attempt's timeout and a backoff of at most
    # 0.1 s: the first attempt lasted about TIMEOUT_S, not the trickle's 15 s.
    assert TIMEOUT_S - 0.1 <= second - first <= TIMEOUT_S + MARGIN_S, second - first
    box.close()


# --- TLS -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context trusting it) for a self-signed 127.0.0.1 certificate."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hymem test receiver")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    client = ssl.create_default_context(cafile=str(folder / "cert.pem"))
    return server, client


class _Ok(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(204)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def https_receiver(tls: tuple[ssl.SSLContext, ssl.SSLContext]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    server.socket = tls[0].wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def one_due() -> Due:
    event = Event("user.erased", "ann", {"turns": 1})
    return Due(event.id, "rx", 0, event.body())


def test_https_delivery_goes_through_the_guarded_transport(
    https_receiver: str, tls: tuple[ssl.SSLContext, ssl.SSLContext]
) -> None:
    endpoint = WebhookEndpoint(url=https_receiver, secret=SECRET, allow_private_targets=True)
    transport = GuardedTransport(total_s=TIMEOUT_S, allow_private=True, ssl_context=tls[1])
    with httpx.Client(transport=transport) as client:
        assert attempt(client, endpoint, one_due()) is None
        assert attempt(client, endpoint, one_due()) is None  # a kept-alive connection
    untrusted = GuardedTransport(total_s=TIMEOUT_S, allow_private=True)  # system CAs only
    with httpx.Client(transport=untrusted) as client:
        error = attempt(client, endpoint, one_due())
    assert error is not None and "CERTIFICATE_VERIFY_FAILED" in error


def test_a_trickled_tls_handshake_ends_at_the_deadline() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def handshake_a_byte_at_a_time() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)  # the ClientHello
            try:
                conn.sendall(bytes([0x16, 3, 3, 0x40, 0]))  # a 16 KiB handshake record...
                while not stop.wait(0.2):
                    conn.sendall(b"\x02")  # ...one byte at a time
            except OSError:
                return

    threading.Thread(target=handshake_a_byte_at_a_time, daemon=True).start()
    url = f"https://127.0.0.1:{server.getsockname()[1]}/hook"
    endpoint = WebhookEndpoint(url=url, secret=SECRET, allow_private_targets=True)
    try:
        with httpx.Client(transport=GuardedTransport(total_s=TIMEOUT_S, allow_private=True)) as c:
            started = time.monotonic()
            assert attempt(c, endpoint, one_due()) == "timeout"
            assert time.monotonic() - started <= TIMEOUT_S + MARGIN_S
    finally:
        stop.set()
        server.close()
