"""Delivering the outbox: one daemon thread per endpoint POSTs its due rows, signed.

A thread per endpoint, so a receiver that is down or slow (each attempt waiting out its
timeout) delays only its own events; the threads never touch the write path, which only
inserts rows and wakes them. A 2xx answer delivers a row; any other status (a redirect
included: none is followed), a timeout, a connection error or a refused target
(`hymem.core.webhook_targets`) counts a failed attempt and schedules the next one by
`retry_delay`; after `max_attempts` the row is dead. `timeout_s` bounds a whole attempt,
however slowly the receiver answers (`transport`). The threads start when the Memory opens, so
rows a crashed process left pending go out then, and stop on `close()` within a bounded time
(a POST in flight is abandoned: its row stays pending and is sent again, which at-least-once
allows).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import httpx
from hymem.core.logging import get_logger
from hymem.core.webhook_endpoint import WebhookEndpoint, redact_urls
from hymem.ops.webhooks.backoff import retry_delay
from hymem.ops.webhooks.outbox import Due, Outbox
from hymem.ops.webhooks.signing import sign
from hymem.ops.webhooks.transport import TargetRefused, webhook_client

log = get_logger("hymem.ops.webhooks")

IDLE_POLL_S = 30.0  # look at the file this often even unwoken (rows made pending by the CLI)
PRUNE_EVERY_S = 3600.0
DRAIN_POLL_S = 0.05  # how often a draining close looks whether the due rows went out
ERROR_PAUSE_S = 1.0  # after the outbox itself failed (disk full, locked): no tight loop


@dataclass(frozen=True)
class Policy:
    """How deliveries are attempted (from `MemoryConfig.webhook_*`)."""

    timeout_s: float = 5.0
    max_attempts: int = 12
    backoff_s: float = 5.0
    backoff_max_s: float = 3600.0


@dataclass
class _Lane:
    endpoint: WebhookEndpoint
    wake: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None


def attempt(client: httpx.Client, endpoint: WebhookEndpoint, due: Due) -> str | None:
    """POST one delivery; None when the receiver took it (2xx), else why not (kept in the
    outbox and shown by `hymem webhooks`, so the URL in it is redacted). The response body is
    never read: a receiver cannot make the sender download anything."""
    headers = sign(endpoint.secret.get_secret_value(), due.event_id, due.body)
    headers["content-type"] = "application/json"
    headers["user-agent"] = "hymem-webhooks"
    try:
        with client.stream(
            "POST",
            endpoint.url,
            content=due.body.encode("utf-8"),
            headers=headers,
            follow_redirects=False,
        ) as response:
            status = response.status_code
    except httpx.TimeoutException:
        return "timeout"
    except TargetRefused as exc:
        log.warning("webhook.refused", endpoint=endpoint.label, reason=str(exc))
        return f"refused: {exc}"[:300]
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}".replace(endpoint.url, endpoint.label)
        return redact_urls(error)[:300]
    return None if 200 <= status < 300 else f"HTTP {status}"


def _endpoint_client(endpoint: WebhookEndpoint, timeout_s: float) -> httpx.Client:
    """Checked targets only (internal ones if the endpoint opted in), `timeout_s` per attempt."""
    return webhook_client(timeout_s, allow_private=endpoint.allow_private_targets)


class Deliverer:
    """The delivery threads of one outbox. `clock` is wall time (rows' schedules are stored
    as unix seconds, so they survive restarts)."""

    def __init__(
        self,
        outbox: Outbox,
        endpoints: Sequence[WebhookEndpoint],
        policy: Policy,
        *,
        clock: Callable[[], float] = time.time,
        client: Callable[[WebhookEndpoint, float], httpx.Client] | None = None,
    ) -> None:
        self._outbox = outbox
        self._policy = policy
        self._clock = clock
        self._client = client or _endpoint_client
        self._lanes = {e.key: _Lane(e) for e in endpoints}
        self._stop = threading.Event()
        self._pruned = 0.0
        self._prune_lock = threading.Lock()

    def start(self) -> None:
        for n, lane in enumerate(self._lanes.values()):
            lane.thread = threading.Thread(
                target=self._run, args=(lane,), name=f"hymem-webhook-{n}", daemon=True
            )
            lane.thread.start()

    def wake(self, endpoints: Sequence[str]) -> None:
        """New rows for these endpoints: look now instead of at the next scheduled time."""
        for key in endpoints:
            lane = self._lanes.get(key)
            if lane is not None:
                lane.wake.set()

    def drain(self, timeout_s: float) -> bool:
        """Let the threads send every delivery due now, for at most `timeout_s`. True when
        none is due any more: each was sent, or failed once and waits for its retry."""
        for lane in self._lanes.values():
            lane.wake.set()
        deadline = time.monotonic() + timeout_s
        while True:
            now = self._clock()
            if all(self._outbox.next_due(key, now) is None for key in self._lanes):
                return True
            if time.monotonic() >= deadline:
                return False
            self._stop.wait(DRAIN_POLL_S)

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop every thread; wait at most `timeout_s` in all. Undelivered rows stay."""
        self._stop.set()
        for lane in self._lanes.values():
            lane.wake.set()
        deadline = time.monotonic() + timeout_s
        for lane in self._lanes.values():
            if lane.thread is not None:
                lane.thread.join(max(0.0, deadline - time.monotonic()))
                if lane.thread.is_alive():
                    log.warning("webhook.stop_timeout", endpoint=lane.endpoint.label)

    def _run(self, lane: _Lane) -> None:
        with self._client(lane.endpoint, self._policy.timeout_s) as client:
            while not self._stop.is_set():
                lane.wake.clear()  # before looking: a row added after the look wakes us
                try:
                    due = self._outbox.next_due(lane.endpoint.key, self._clock())
                    if due is None:
                        self._maybe_prune()
                        lane.wake.wait(self._idle_wait(lane.endpoint.key))
                        continue
                    self._deliver(client, lane.endpoint, due)
                except Exception as exc:  # the outbox failed: keep the thread, try again
                    log.error(
                        "webhook.outbox_failed", endpoint=lane.endpoint.label, error=repr(exc)
                    )
                    self._stop.wait(ERROR_PAUSE_S)

    def _idle_wait(self, endpoint: str) -> float:
        nxt = self._outbox.next_attempt_at(endpoint)
        if nxt is None:
            return IDLE_POLL_S
        return min(IDLE_POLL_S, max(0.0, nxt - self._clock()))

    def _deliver(self, client: httpx.Client, endpoint: WebhookEndpoint, due: Due) -> None:
        error = attempt(client, endpoint, due)
        now = self._clock()
        where = {"endpoint": endpoint.label, "event_id": due.event_id, "attempt": due.attempts + 1}
        if error is None:
            self._outbox.delivered(due, now)
            log.info("webhook.delivered", **where)
            return
        policy = self._policy
        if due.attempts + 1 >= policy.max_attempts:
            self._outbox.failed(due, error, now, None)
            log.error("webhook.dead", error=error, **where)
            return
        delay = retry_delay(due.attempts + 1, base_s=policy.backoff_s, cap_s=policy.backoff_max_s)
        self._outbox.failed(due, error, now, now + delay)
        log.info("webhook.retry", error=error, retry_in_s=round(delay, 3), **where)

    def _maybe_prune(self) -> None:
        """Drop old delivered rows about once an hour (one thread does it)."""
        now = self._clock()
        if now - self._pruned < PRUNE_EVERY_S or not self._prune_lock.acquire(blocking=False):
            return
        try:
            self._pruned = now
            self._outbox.prune(now)
        finally:
            self._prune_lock.release()


__all__ = ["Deliverer", "Policy", "attempt"]
