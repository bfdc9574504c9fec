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
import re
import time
from collections.abc import Mapping

from hymem.core.errors import ConfigError, HymemError, UserInputError
from hymem.core.webhook_endpoint import secret_key

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
TOLERANCE_S = 300  # the spec's recommended window for a request's timestamp
_UNIX_SECONDS = re.compile(r"[0-9]{1,15}")  # ASCII digits only: int() also takes "١٢" or "1_0"


class SignatureError(HymemError, ValueError):
    """A request that must not be trusted: a header missing, a stale timestamp, no signature
    matching. Raised by `verify` only."""


def _utf8(value: str | bytes, what: str) -> bytes:
    """The bytes a value is signed as; text that UTF-8 cannot encode (a lone surrogate)
    was never what a sender signed."""
    if isinstance(value, bytes):
        return value
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise UserInputError(f"{what} is not UTF-8 text (it holds a lone surrogate)") from None


def _mac(key: bytes, webhook_id: bytes, timestamp: int, body: bytes) -> str:
    signed = webhook_id + f".{timestamp}.".encode("ascii") + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")


def signature(secret: str, webhook_id: str, timestamp: int, body: str | bytes) -> str:
    """The `webhook-signature` value of one request: `v1,<base64 HMAC-SHA256>`."""
    return _mac(
        secret_key(secret), _utf8(webhook_id, "webhook-id"), timestamp, _utf8(body, "the body")
    )


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


def _receiver_key(secret: str) -> bytes:
    """The receiver's own key; a malformed one is its configuration's fault, so a
    `ConfigError` (a server error to fix), not a `SignatureError` (a 400 to the sender)."""
    if not isinstance(secret, str):
        raise ConfigError(f"the webhook secret must be text, not {type(secret).__name__}")
    try:
        return secret_key(secret)
    except (ValueError, UnicodeEncodeError) as exc:
        reason = "it holds a lone surrogate" if isinstance(exc, UnicodeEncodeError) else exc
        raise ConfigError(f"invalid webhook secret: {reason}") from None


Headers = Mapping[str, str] | Mapping[bytes, bytes]


def _headers(headers: Headers) -> dict[str, bytes]:
    """Header names lowered, values as the bytes received. Names and values may be text or
    bytes (ASGI servers hand over bytes); anything else, or text UTF-8 cannot encode, is
    dropped, so it reads as missing."""
    found: dict[str, bytes] = {}
    for name, value in headers.items():
        key = name.decode("latin-1") if isinstance(name, bytes) else name
        if not isinstance(key, str) or not isinstance(value, str | bytes):
            continue
        try:
            found[key.lower()] = value if isinstance(value, bytes) else value.encode("utf-8")
        except UnicodeEncodeError:
            continue
    return found


def verify(
    secret: str,
    headers: Headers,
    body: str | bytes,
    *,
    tolerance_s: float = TOLERANCE_S,
    now: float | None = None,
) -> str:
    """Check a received request; returns its webhook id (to deduplicate retries) or raises
    `SignatureError`, whatever the request holds. `body` must be the raw bytes received,
    before any JSON parsing (a re-serialised body does not verify); header names are matched
    in any case, and names and values may be text or bytes. Several space-separated
    signatures are accepted if one matches (the spec's key rotation). A malformed `secret` is
    a `ConfigError`."""
    key = _receiver_key(secret)
    lower = _headers(headers)
    webhook_id = lower.get(ID_HEADER)
    stamp = lower.get(TIMESTAMP_HEADER)
    given = lower.get(SIGNATURE_HEADER)
    if not webhook_id or not stamp or not given:
        raise SignatureError(
            "missing webhook-id, webhook-timestamp or webhook-signature (or not UTF-8 text)"
        )
    if not _UNIX_SECONDS.fullmatch(stamp.decode("latin-1")):
        raise SignatureError(f"webhook-timestamp {stamp[:40]!r} is not unix seconds")
    timestamp = int(stamp)
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_s:
        raise SignatureError("webhook-timestamp is outside the tolerance: a replay or a skew")
    if isinstance(body, bytearray | memoryview):
        body = bytes(body)
    if not isinstance(body, bytes | str):
        raise SignatureError(f"the body must be the raw bytes received, not {type(body).__name__}")
    try:
        raw = _utf8(body, "the body")
        text_id = webhook_id.decode("utf-8")
    except (UserInputError, UnicodeDecodeError):
        raise SignatureError(
            "the body or webhook-id is not UTF-8 text: pass the raw bytes"
        ) from None
    want = _mac(key, webhook_id, timestamp, raw).encode("ascii")
    if not any(hmac.compare_digest(want, sig) for sig in given.split()):
        raise SignatureError("no webhook-signature matches this body and secret")
    return text_id


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
