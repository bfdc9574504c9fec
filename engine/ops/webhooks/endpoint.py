"""A webhook endpoint as the operator registers it (`MemoryConfig.webhooks`), and the event
types hymem emits.

Kept free of the rest of hymem (pydantic and `hymem.core.errors` only) because `hymem.core.config`
imports it: the configuration must not pull in the write path to validate a URL."""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlsplit

from hymem.core.errors import ConfigError
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

TURNS_COMMITTED = "turns.committed"
SUMMARIES_CHANGED = "summaries.changed"
USER_ERASED = "user.erased"
IMPORT_FINISHED = "import.finished"
EVENT_TYPES = (TURNS_COMMITTED, SUMMARIES_CHANGED, USER_ERASED, IMPORT_FINISHED)

SECRET_PREFIX = "whsec_"  # Standard Webhooks: the rest is the base64 of the key's bytes
MIN_KEY_BYTES = 16  # a shorter HMAC key is guessable


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: a `whsec_<base64>` secret (what Standard Webhooks libraries
    such as `standardwebhooks` take) is its decoded bytes, so their verifiers work unchanged;
    any other text is its UTF-8 bytes."""
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("a whsec_ secret must be followed by base64") from None
    return secret.encode("utf-8")


class WebhookEndpoint(BaseModel):
    """Where events are POSTed and with what secret they are signed.

    `name` identifies the endpoint in the outbox (default: the URL), so an endpoint keeps its
    undelivered events across restarts and a URL can change under the same name. `events`
    filters the event types sent (default: all of `EVENT_TYPES`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="http:// or https:// URL the events are POSTed to")
    secret: SecretStr = Field(
        description=f"signing secret: '{SECRET_PREFIX}<base64>' or text of 16+ bytes"
    )
    events: list[str] = Field(default_factory=lambda: list(EVENT_TYPES))
    name: str | None = Field(None, description="the endpoint's key in the outbox; default: url")

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ConfigError(f"invalid webhook endpoint: {_problems(exc)}") from None

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http:// or https:// URL with a host")
        return url.strip()

    @field_validator("secret")
    @classmethod
    def _strong_secret(cls, secret: SecretStr) -> SecretStr:
        if len(secret_key(secret.get_secret_value())) < MIN_KEY_BYTES:
            raise ValueError(f"a webhook secret needs at least {MIN_KEY_BYTES} bytes of key")
        return secret

    @field_validator("events")
    @classmethod
    def _known_events(cls, events: list[str]) -> list[str]:
        unknown = sorted(set(events) - set(EVENT_TYPES))
        if unknown:
            raise ValueError(f"unknown event types {unknown}: use some of {list(EVENT_TYPES)}")
        if not events:
            raise ValueError(f"no event types: leave events out for all of {list(EVENT_TYPES)}")
        return list(dict.fromkeys(events))

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str | None) -> str | None:
        if name is not None and not name.strip():
            raise ValueError("an endpoint name must not be blank")
        return name

    @property
    def key(self) -> str:
        """What the outbox files this endpoint's deliveries under."""
        return self.name or self.url

    def wants(self, event_type: str) -> bool:
        return event_type in self.events


def _problems(exc: ValidationError) -> str:
    """Each field at fault and what is wrong, never the value given (it may be the secret)."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err["loc"]) or "endpoint"
        cause = (err.get("ctx") or {}).get("error")
        parts.append(f"{where}: {cause if cause is not None else err['msg']}")
    return "; ".join(parts)


def check_unique(endpoints: list[WebhookEndpoint]) -> list[WebhookEndpoint]:
    """Two endpoints under one key would share (and steal) each other's deliveries."""
    seen: set[str] = set()
    for endpoint in endpoints:
        if endpoint.key in seen:
            raise ValueError(f"two webhook endpoints are named {endpoint.key!r}: name them apart")
        seen.add(endpoint.key)
    return endpoints


__all__ = [
    "EVENT_TYPES",
    "IMPORT_FINISHED",
    "SUMMARIES_CHANGED",
    "TURNS_COMMITTED",
    "USER_ERASED",
    "WebhookEndpoint",
    "check_unique",
    "secret_key",
]
