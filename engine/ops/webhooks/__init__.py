"""Webhooks: signed JSON events from a durable outbox, delivered at least once.

`endpoint` (what the operator registers), `events` (finished calls to events), `signing`
(Standard Webhooks headers; `verify` for receivers), `outbox` (the SQLite file), `backoff`,
`delivery` (the sending threads) and `observer` (the Memory's wiring). Only the light modules
are imported here: `hymem.core.config` imports this package.
"""

from hymem.ops.webhooks.endpoint import EVENT_TYPES, WebhookEndpoint
from hymem.ops.webhooks.signing import SignatureError, sign, verify

__all__ = ["EVENT_TYPES", "SignatureError", "WebhookEndpoint", "sign", "verify"]
