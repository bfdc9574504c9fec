"""Webhooks: signed JSON events from a durable outbox, delivered at least once.

What the operator registers is `hymem.core.webhook_endpoint` (the configuration validates it,
with the addresses `hymem.core.webhook_targets` refuses); here are `events` (finished calls to
events), `signing` (Standard Webhooks headers; `verify` for receivers), `outbox` (the SQLite
file), `backoff`, `delivery` (the sending threads, through `transport`) and `observer` (the
Memory's wiring). Only the light modules are imported here.
"""

from hymem.core.webhook_endpoint import EVENT_TYPES, WebhookEndpoint
from hymem.ops.webhooks.signing import SignatureError, sign, verify

__all__ = ["EVENT_TYPES", "SignatureError", "WebhookEndpoint", "sign", "verify"]
