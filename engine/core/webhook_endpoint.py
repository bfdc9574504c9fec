"""A webhook endpoint as the operator registers it (`MemoryConfig.webhooks`), and the event
types hymem emits.

In the core because `hymem.core.config` validates `MemoryConfig.webhooks` with it; it uses
nothing but pydantic, `hymem.core.errors` and the stdlib-only `hymem.core.webhook_targets`.
Delivering the events is `hymem.ops.webhooks`' work."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from hymem.core.errors import ConfigError
from hymem.core.webhook_targets import host_refusal
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

TURNS_COMMITTED = "turns.committed"
SUMMARIES_CHANGED = "summaries.changed"
USER_ERASED = "user.erased"
IMPORT_FINISHED = "import.finished"
EVENT_TYPES = (TURNS_COMMITTED, SUMMARIES_CHANGED, USER_ERASED, IMPORT_FINISHED)

SECRET_PREFIX = "whsec_"  # Standard Webhooks: the rest is the base64 of the key's bytes
MIN_KEY_BYTES = 16  # a shorter HMAC key is guessable
HIDDEN = "***"
# A path segment shown as it is: a short plain word ("hooks", "v2"); anything longer or with
# digits may be a token (Slack's /services/T0/B0/<token>, Discord's /webhooks/<id>/<token>).
_PLAIN_SEGMENT = re.compile(r"[A-Za-z][A-Za-z_.-]{0,15}|v[0-9]{1,2}")


def redact_url(url: str) -> str:
    """A URL as logs and listings may show it: scheme, host, port and the path's plain words;
    user info, query values, the fragment and path segments that may be tokens are hidden.
    Text that is not an http(s) URL (an endpoint's name) comes back unchanged."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return HIDDEN if "://" in url else url
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown = f"{parts.scheme}://{HIDDEN + '@' if '@' in parts.netloc else ''}{host}"
    shown += f":{port}" if port is not None else ""
    shown += "/".join(
        s if not s or _PLAIN_SEGMENT.fullmatch(s) else HIDDEN for s in parts.path.split("/")
    )
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        names = [quote(k, safe="") if _PLAIN_SEGMENT.fullmatch(k) else HIDDEN for k, _ in pairs]
        shown += "?" + "&".join(f"{k}={HIDDEN}" for k in names) if names else f"?{HIDDEN}"
    return shown + (f"#{HIDDEN}" if parts.fragment else "")


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


_URL_IN_TEXT = re.compile(r"https?://[^\s'\"<>]+", re.IGNORECASE)


def redact_urls(text: str) -> str:
    """`text` (an error message) with every http(s) URL in it redacted."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group()), text)


class WebhookEndpoint(BaseModel):
    """Where events are POSTed and with what secret they are signed.

    `name` identifies the endpoint in the outbox (default: the URL), so an endpoint keeps its
    undelivered events across restarts and a URL can change under the same name. `events`
    filters the event types sent (default: all of `EVENT_TYPES`). Loopback, link-local and
    private hosts are refused unless `allow_private_targets` is set (cloud metadata addresses
    always are): see `hymem.core.webhook_targets`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="http:// or https:// URL the events are POSTed to")
    secret: SecretStr = Field(
        description=f"signing secret: '{SECRET_PREFIX}<base64>' or text of 16+ bytes"
    )
    events: list[str] = Field(default_factory=lambda: list(EVENT_TYPES))
    name: str | None = Field(None, description="the endpoint's key in the outbox; default: url")
    allow_private_targets: bool = Field(
        False,
        description=(
            "let this endpoint reach loopback, link-local and private addresses (an internal"
            " receiver); cloud metadata addresses stay refused"
        ),
    )

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
            raise ValueError(f"{redact_url(url)!r} is not an http:// or https:// URL with a host")
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

    @model_validator(mode="after")
    def _allowed_target(self) -> WebhookEndpoint:
        """Refuse internal hosts now, where the host alone tells (an address literal, a
        `localhost` name); names are checked again after they resolve, on every delivery."""
        host = urlsplit(self.url).hostname or ""
        problem = host_refusal(host, allow_private=self.allow_private_targets)
        if problem is not None:
            raise ValueError(f"url {redact_url(self.url)}: {problem}")
        return self

    @property
    def key(self) -> str:
        """What the outbox files this endpoint's deliveries under."""
        return self.name or self.url

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The URL redacted in a repr too (a config printed in a traceback or a log)."""
        for name, value in super().__repr_args__():
            yield name, redact_url(value) if name == "url" else value

    @property
    def label(self) -> str:
        """The endpoint as logs and errors name it: its name, else its URL redacted."""
        return self.name or redact_url(self.url)

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
            raise ValueError(f"two webhook endpoints are named {endpoint.label!r}: name them apart")
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
    "redact_url",
    "redact_urls",
    "secret_key",
]
