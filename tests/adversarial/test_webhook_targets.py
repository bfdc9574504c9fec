"""Webhook endpoints aimed inside: the cloud metadata service, loopback, link-local, private and
unique-local addresses are refused unless the endpoint opts in (`allow_private_targets`), and
metadata addresses even then; checked when the endpoint is registered and again on delivery
after the name resolves, with no redirect followed. A token in an endpoint's URL is not
printed by the writer's logs or by `hymem webhooks`.

No test sends anything beyond 127.0.0.1: refusals happen before a connection is opened, and
the `_loopback_only` guard fails any test whose code tries to connect elsewhere (so a broken
guard shows up as a failure, not as traffic). Names resolve through an injected resolver,
since a test machine has no DNS to rely on; everything after resolution is real."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app
from hymem.core.errors import ConfigError
from hymem.ops.webhooks import WebhookEndpoint
from hymem.ops.webhooks.delivery import Deliverer, Policy, attempt
from hymem.ops.webhooks.events import Event
from hymem.ops.webhooks.outbox import Due, Outbox
from hymem.ops.webhooks.transport import webhook_client
from typer.testing import CliRunner

from tests.log_events import capture_events
from tests.webhook_receiver import Receiver, free_port

pytestmark = pytest.mark.integration

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
TOKEN = "tok3n-5ecret-in-the-url"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Fail, before any packet, a connection to anything but 127.0.0.1 / ::1."""
    tried: list[object] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and not ip_address(host.split("%")[0]).is_loopback:
            tried.append(address)
            raise AssertionError(f"a test tried to connect to {address}")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield tried
    assert tried == [], f"connections attempted beyond loopback: {tried}"


def resolver(answers: dict[str, list[str]]) -> Any:
    """getaddrinfo for the names in `answers` (each to its addresses); other hosts as usual."""

    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        if host not in answers:
            return socket.getaddrinfo(host, port, *args, **kwargs)
        out: list[tuple[Any, ...]] = []
        for a in answers[host]:
            family = socket.AF_INET6 if ":" in a else socket.AF_INET
            where = (a, port, 0, 0) if family == socket.AF_INET6 else (a, port)
            out.append((family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", where))
        return out

    return resolve


def due() -> Due:
    event = Event("user.erased", "ann", {"turns": 1})
    return Due(event.id, "rx", 0, event.body())


# --- registration ------------------------------------------------------------------------

ALWAYS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://169.254.170.2/v2/credentials",
    "http://0.0.0.0:8080/hook",
    "http://[::]/hook",
    "http://224.0.0.1/hook",
    "http://240.0.0.1/hook",
]
INTERNAL = [
    "http://127.0.0.1:8080/hook",
    "http://localhost:8080/hook",
    "http://api.localhost/hook",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://2130706433/hook",  # 127.0.0.1 as one number: the C resolver takes it
    "http://0x7f.1/hook",
    "http://10.0.0.5/hook",
    "http://172.16.3.4/hook",
    "http://192.168.1.10/hook",
    "http://169.254.10.10/hook",
    "http://[fe80::1]/hook",
    "http://[fd12:3456:789a::1]/hook",  # unique-local fc00::/7
    "http://[fc00::5]/hook",
    "http://100.64.0.1/hook",  # shared address space (carrier NAT)
]


@pytest.mark.parametrize("url", ALWAYS + INTERNAL)
def test_an_internal_target_is_refused_at_registration(url: str) -> None:
    with pytest.raises(ConfigError, match="webhook endpoint") as info:
        WebhookEndpoint(url=url, secret=SECRET)
    assert "allow_private_targets" in str(info.value) or "never a webhook target" in str(info.value)


@pytest.mark.parametrize("url", INTERNAL)
def test_an_endpoint_opts_in_to_internal_targets(url: str) -> None:
    endpoint = WebhookEndpoint(url=url, secret=SECRET, allow_private_targets=True)
    assert endpoint.allow_private_targets


@pytest.mark.parametrize("url", ALWAYS)
def test_metadata_and_non_unicast_targets_are_refused_even_with_the_opt_in(url: str) -> None:
    with pytest.raises(ConfigError, match="never a webhook target"):
        WebhookEndpoint(url=url, secret=SECRET, allow_private_targets=True)


@pytest.mark.parametrize(
    "url", ["https://hooks.example.com/hymem", "https://93.184.215.14/x", "http://[2606:4700::1]/"]
)
def test_public_targets_need_no_opt_in(url: str) -> None:
    assert not WebhookEndpoint(url=url, secret=SECRET).allow_private_targets


def test_the_environment_cannot_point_a_worker_at_the_metadata_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hooks = [{"url": f"http://169.254.169.254/latest/meta-data/?t={TOKEN}", "secret": SECRET}]
    monkeypatch.setenv("HYMEM_WEBHOOKS", json.dumps(hooks))
    with pytest.raises(ConfigError, match="metadata") as info:
        MemoryConfig()
    assert TOKEN not in str(info.value)


# --- delivery: after resolution, before connecting ---------------------------------------


def test_a_name_resolving_to_loopback_is_refused_before_connecting() -> None:
    with Receiver() as rx:
        url = f"http://hooks.example.test:{rx.port}/hook"
        names = resolver({"hooks.example.test": ["127.0.0.1"]})
        endpoint = WebhookEndpoint(url=url, secret=SECRET)  # a name: registration lets it by
        with webhook_client(2.0, resolve=names) as client:
            error = attempt(client, endpoint, due())
        assert error is not None and error.startswith("refused: hooks.example.test: 127.0.0.1")
        assert "allow_private_targets" in error
        assert rx.received == []  # nothing reached the receiver

        opted = WebhookEndpoint(url=url, secret=SECRET, allow_private_targets=True)
        with webhook_client(2.0, allow_private=True, resolve=names) as client:
            assert attempt(client, opted, due()) is None  # sent to the address it checked
        (got,) = rx.delivered()
        assert got.headers["Host"] == f"hooks.example.test:{rx.port}"


@pytest.mark.parametrize(
    ("answers", "opt_in"),
    [
        (["169.254.169.254"], True),  # the metadata service: not even with the opt-in
        (["fd00:ec2::254"], True),
        (["10.1.2.3"], False),
        (["fd00:1::7"], False),
        (["93.184.215.14", "127.0.0.1"], False),  # one bad answer of several refuses them all
        (["93.184.215.14", "169.254.169.254"], True),
    ],
)
def test_a_name_resolving_inside_is_refused_before_any_connection(
    answers: list[str], opt_in: bool, _loopback_only: list[object]
) -> None:
    endpoint = WebhookEndpoint(
        url="https://hooks.example.test/hymem", secret=SECRET, allow_private_targets=opt_in
    )
    names = resolver({"hooks.example.test": answers})
    with webhook_client(2.0, allow_private=opt_in, resolve=names) as client:
        error = attempt(client, endpoint, due())
    assert error is not None and error.startswith("refused: hooks.example.test: "), error
    assert _loopback_only == []


class _Redirect(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(307)
        self.send_header("location", "http://169.254.169.254/latest/meta-data/")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def test_a_redirect_is_not_followed() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        endpoint = WebhookEndpoint(
            url=f"http://127.0.0.1:{port}/hook", secret=SECRET, allow_private_targets=True
        )
        with webhook_client(2.0, allow_private=True) as client:
            assert attempt(client, endpoint, due()) == "HTTP 307"
    finally:
        server.shutdown()
        server.server_close()


def test_a_refused_delivery_is_a_failed_attempt_kept_for_retry(tmp_path: Path) -> None:
    # The Deliverer's own client: the endpoint did not opt in, and its name resolves to
    # loopback now (the DNS changed after registration).
    with Receiver() as rx:
        endpoint = WebhookEndpoint(url=f"http://rebind.example.test:{rx.port}/h", secret=SECRET)
        names = resolver({"rebind.example.test": ["127.0.0.1"]})
        box = Outbox(tmp_path / "o.sqlite3")
        box.add(Event("user.erased", "ann", {}), [endpoint.key])
        policy = Policy(timeout_s=1.0, max_attempts=100, backoff_s=0.05, backoff_max_s=0.1)
        deliverer = Deliverer(
            box,
            [endpoint],
            policy,
            client=lambda e, t: webhook_client(
                t, allow_private=e.allow_private_targets, resolve=names
            ),
        )
        deliverer.start()
        try:
            deadline = time.monotonic() + 5
            while box.rows()[0]["attempts"] < 2:
                assert time.monotonic() < deadline, "no retry"
                time.sleep(0.02)
        finally:
            deliverer.close()
        (row,) = box.rows()
        assert row["state"] == "pending" and str(row["last_error"]).startswith("refused: ")
        assert rx.received == []
        box.close()


# --- tokens in URLs ----------------------------------------------------------------------


def test_a_token_in_the_url_stays_out_of_the_writers_logs(tmp_path: Path) -> None:
    with Receiver(mode="fail") as rx, capture_events(logging.INFO) as events:
        url = f"http://bot:{TOKEN}@127.0.0.1:{rx.port}/hook/{TOKEN}?token={TOKEN}"
        hooks = [{"url": url, "secret": SECRET, "allow_private_targets": True}]
        config = MemoryConfig.defaults(
            embedder="hashing", webhooks=hooks, webhook_backoff_s=0.05, webhook_backoff_max_s=0.1
        )
        with Memory(tmp_path / "m", config=config) as mem:
            turns = [
                {"speaker": "Ann", "text": "I moved to Lisbon in March for the new job."},
                {"speaker": "Bo", "text": "Nice! How is Lisbon treating you so far?"},
            ]
            mem.add(turns, user_id="ann", session_id="s1")
            assert mem.flush(user_id="ann").segments_written
            deadline = time.monotonic() + 5
            while sum(r.status == 500 for r in rx.received) < 2:
                assert time.monotonic() < deadline, "no retry"
                time.sleep(0.02)
    webhook_events = [e for e in events if str(e.get("event", "")).startswith("webhook.")]
    assert {"webhook.open", "webhook.retry"} <= {e["event"] for e in webhook_events}
    assert TOKEN not in json.dumps(events, default=str)
    opened = next(e for e in webhook_events if e["event"] == "webhook.open")
    assert opened["endpoints"] == [f"http://***@127.0.0.1:{rx.port}/hook/***?token=***"]


def test_a_token_in_the_url_stays_out_of_hymem_webhooks(tmp_path: Path) -> None:
    url = f"https://hooks.example.com/services/T0/B0/{TOKEN}?token={TOKEN}"
    Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing")).close()
    box = Outbox(tmp_path / "m" / "webhooks" / "outbox.sqlite3")  # rows of an earlier run
    event = Event("user.erased", "ann", {})
    box.add(event, [url])
    box.failed(Due(event.id, url, 0, event.body()), f"ConnectError: {url} refused", 1.0, None)
    box.close()
    env = {"HYMEM_WEBHOOKS": json.dumps([{"url": url, "secret": SECRET}]), "COLUMNS": "400"}
    for extra in (["--json"], ["--json", "--dead"], ["--dead"]):
        args = ["webhooks", "--store", str(tmp_path / "m"), *extra]
        shown = CliRunner().invoke(app, args, env=env)
        assert shown.exit_code == 0, shown.output
        assert TOKEN not in shown.output, shown.output
        if "--json" in extra:  # a table may cut the URL to the terminal's width
            assert "hooks.example.com/services/***/***/***" in shown.output, shown.output
    listed = json.loads(
        CliRunner()
        .invoke(app, ["webhooks", "--store", str(tmp_path / "m"), "--json"], env=env)
        .output
    )
    (status,) = listed["endpoints"]
    assert status["endpoint"] == "https://hooks.example.com/services/***/***/***?token=***"
    assert status["dead"] == 1
