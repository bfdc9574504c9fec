"""A Memory's webhooks: the observer that files events in the outbox, and its wiring.

`Memory.__init__` calls `webhook_outbox` before it opens the store (a missing outbox setting
for an object store is a `ConfigError` before anything is touched), `open_webhooks` once the
store is open, and `Webhooks.start` last; `Memory.close()` calls `Webhooks.close`. A read-only
Memory has none: it makes no events and delivers none.
"""

from __future__ import annotations

from pathlib import Path

from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError
from hymem.core.logging import get_logger
from hymem.core.webhook_endpoint import USER_ERASED, WebhookEndpoint
from hymem.indexes.location import StoreLocation
from hymem.ops.calls import CallRecord
from hymem.ops.webhooks.delivery import Deliverer, Policy
from hymem.ops.webhooks.events import events_of
from hymem.ops.webhooks.outbox import Outbox

log = get_logger("hymem.ops.webhooks")

OUTBOX_FOLDER = "webhooks"
OUTBOX_FILE = "outbox.sqlite3"


def outbox_path(config: MemoryConfig, location: StoreLocation) -> Path:
    """Where this store's outbox lives: `webhook_outbox`, else `<folder>/webhooks/` of a local
    store. An object store has no local folder to hold it (and the worker's cache folder may
    be wiped, losing events), so there it must be set."""
    if config.webhook_outbox:
        return Path(config.webhook_outbox).expanduser()
    if location.remote:
        raise ConfigError(
            f"webhooks on an object store ({location.uri}) need webhook_outbox"
            " (HYMEM_WEBHOOK_OUTBOX): a local file where this worker keeps undelivered events"
        )
    return location.folder / OUTBOX_FOLDER / OUTBOX_FILE


def policy_of(config: MemoryConfig) -> Policy:
    return Policy(
        timeout_s=config.webhook_timeout_s,
        max_attempts=config.webhook_max_attempts,
        backoff_s=config.webhook_backoff_s,
        backoff_max_s=config.webhook_backoff_max_s,
    )


class Webhooks:
    """The observer (`hymem.ops.calls.Observer`) that turns each finished call's changes into
    events, durable in the outbox before the call returns, and the threads that send them."""

    def __init__(
        self,
        outbox: Outbox,
        endpoints: list[WebhookEndpoint],
        deliverer: Deliverer,
        *,
        drain_s: float = 0.0,
    ) -> None:
        self.outbox = outbox
        self._endpoints = endpoints
        self._deliverer = deliverer
        self._drain_s = drain_s

    def observe(self, call: CallRecord) -> None:
        """File the call's events. A failure here (the disk is full) is logged by the
        observers and never fails the call: the write itself is already stored."""
        for event in events_of(call):
            targets = [e.key for e in self._endpoints if e.wants(event.type)]
            if not targets:
                continue
            self.outbox.add(event, targets)
            self._deliverer.wake(targets)
            if event.type == USER_ERASED and event.user_id is not None:
                self.outbox.forget_user(event.user_id, keep=event.id)

    def start(self) -> None:
        self._deliverer.start()

    def close(self) -> None:
        """Send what is due now (for at most `webhook_drain_s`), then stop delivering (within
        about 2 s); what is undelivered waits for the next writer to open the memory."""
        try:
            if self._drain_s > 0:
                self._drained()
            self._deliverer.close()
        finally:
            self.outbox.close()

    def _drained(self) -> None:
        self._deliverer.drain(self._drain_s)
        pending = sum(s.pending for s in self.outbox.status())
        if not pending:
            return
        log.warning(
            "webhook.pending_at_close",
            pending=pending,
            waited_s=self._drain_s,
            note=(
                "not delivered before this process ended: the next process that opens this"
                " memory for writing (a long-running `hymem serve` or `hymem mcp`, or the next"
                " command) delivers them; `hymem webhooks` shows them"
            ),
        )


def open_webhooks(config: MemoryConfig, path: Path | None) -> Webhooks | None:
    """The Memory's webhooks, not yet started; None without endpoints or without a path
    (a read-only Memory)."""
    if not config.webhooks or path is None:
        return None
    outbox = Outbox(path)
    deliverer = Deliverer(outbox, config.webhooks, policy_of(config))
    log.info("webhook.open", outbox=str(path), endpoints=[e.label for e in config.webhooks])
    return Webhooks(outbox, list(config.webhooks), deliverer, drain_s=config.webhook_drain_s)


def webhook_outbox(
    config: MemoryConfig, location: StoreLocation, *, read_only: bool
) -> Path | None:
    """The outbox this Memory will write, checked before the store opens (None: no webhooks,
    or a read-only Memory, which emits nothing)."""
    if not config.webhooks or read_only:
        return None
    return outbox_path(config, location)


__all__ = ["Webhooks", "open_webhooks", "outbox_path", "policy_of", "webhook_outbox"]
