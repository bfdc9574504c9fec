"""Signing and verifying a webhook request the Standard Webhooks way (standardwebhooks.com).

The sender signs `"{webhook-id}.{webhook-timestamp}.{body}"` with HMAC-SHA256 under the
endpoint's secret and sends `webhook-signature: v1,<base64 of the MAC>`. The id is the event's
(the same on every retry: the receiver's idempotency key); the timestamp is the attempt's, so a
receiver can refuse a replay of an old request. Pure functions, no hymem state: a receiver
can import `verify` alone (or use any Standard Webhooks library with a `whsec_` secret).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping

from hymem.core.errors import HymemError
from hymem.ops.webhooks.endpoint import secret_key

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
TOLERANCE_S = 300  # the spec's recommended window for a request's timestamp


class SignatureError(HymemError, ValueError):
    """A request that must not be trusted: a header missing, a stale timestamp, no signature
    matching. Raised by `verify` only."""


def signature(secret: str, webhook_id: str, timestamp: int, body: str | bytes) -> str:
    """The `webhook-signature` value of one request: `v1,<base64 HMAC-SHA256>`."""
    raw = body if isinstance(body, bytes) else body.encode("utf-8")
    signed = f"{webhook_id}.{timestamp}.".encode() + raw
    mac = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def sign(
    secret: str, webhook_id: str, body: str | bytes, *, timestamp: int | None = None
) -> dict[str, str]:
    """The three headers of one delivery attempt (`timestamp` defaults to now)."""
    when = int(time.time()) if timestamp is None else timestamp
    return {
        ID_HEADER: webhook_id,
        TIMESTAMP_HEADER: str(when),
        SIGNATURE_HEADER: signature(secret, webhook_id, when, body),
    }


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: str | bytes,
    *,
    tolerance_s: float = TOLERANCE_S,
    now: float | None = None,
) -> str:
    """Check a received request; returns its webhook id (to deduplicate retries) or raises
    `SignatureError`. `body` must be the raw bytes received, before any JSON parsing (a
    re-serialised body does not verify); header names are matched in any case. Several
    space-separated signatures are accepted if one matches (the spec's key rotation)."""
    lower = {k.lower(): v for k, v in headers.items()}
    webhook_id = lower.get(ID_HEADER)
    stamp = lower.get(TIMESTAMP_HEADER)
    given = lower.get(SIGNATURE_HEADER)
    if not webhook_id or not stamp or not given:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise SignatureError(f"webhook-timestamp {stamp!r} is not unix seconds") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_s:
        raise SignatureError("webhook-timestamp is outside the tolerance: a replay or a skew")
    expected = signature(secret, webhook_id, timestamp, body)
    want = expected.encode("ascii")
    if not any(hmac.compare_digest(want, sig.encode("utf-8", "replace")) for sig in given.split()):
        raise SignatureError("no webhook-signature matches this body and secret")
    return webhook_id


__all__ = [
    "ID_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "TOLERANCE_S",
    "SignatureError",
    "sign",
    "signature",
    "verify",
]
