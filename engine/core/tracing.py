"""OpenTelemetry spans through `opentelemetry-api` alone: a no-op until the application
configures an SDK (`TracerProvider` + exporter), so hymem never exports anything on its own.

Span names and attributes follow the semantic conventions where one exists: GenAI for model
calls (`chat {model}`, `gen_ai.*`), HTTP for the REST server (`http.*`, `url.path`), database
for store commits (`db.system.name`, `db.operation.name`); hymem's own attributes are under
`hymem.*`. A user id is never put on a span as given: `user_attributes` gives a keyed BLAKE2b
hash (`MemoryConfig.telemetry_hash_key`) or nothing (`telemetry_user_ids="omit"`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hymem.core.version import __version__
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

TRACER_NAME = "hymem"
USER_HASH = "hymem.user.hash"
AttrValue = str | bool | int | float


def tracer() -> trace.Tracer:
    """The current provider's tracer, looked up per use so an SDK configured after import
    (or swapped by a test) is the one that records."""
    return trace.get_tracer(TRACER_NAME, __version__)


def user_hash(user_id: str, key: str | None) -> str:
    """16 hex digits of a keyed BLAKE2b: the same user gives the same value across spans and
    processes sharing the key, and the id cannot be read back from it. Any text hashes (a
    lone surrogate too): the span opens before the call checks its arguments, and telemetry
    must never be what refuses one."""
    secret = (key or "").encode("utf-8", "surrogatepass")[:64]
    data = user_id.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, key=secret, digest_size=8).hexdigest()


def user_attributes(user_id: str | None, mode: str, key: str | None) -> dict[str, AttrValue]:
    if user_id is None or mode == "omit":
        return {}
    return {USER_HASH: user_hash(user_id, key)}


def clean(attributes: Mapping[str, Any]) -> dict[str, AttrValue]:
    """Attributes OpenTelemetry accepts: None dropped, lists of scalars kept, else text."""
    out: dict[str, Any] = {}
    for name, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[name] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[name] = list(value)
        else:
            out[name] = str(value)
    return out


@contextmanager
def span(
    name: str, attributes: Mapping[str, Any] | None = None, *, kind: SpanKind = SpanKind.INTERNAL
) -> Iterator[Span]:
    """A child of the current span; an exception marks it failed (with the error's type) and
    propagates unchanged."""
    with tracer().start_as_current_span(
        name,
        kind=kind,
        attributes=clean(attributes or {}),
        record_exception=True,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            current.set_attribute("error.type", type(exc).__name__)
            current.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
            raise


def set_attributes(attributes: Mapping[str, Any]) -> None:
    """Add to the current span (a no-op outside one or without an SDK)."""
    current = trace.get_current_span()
    if current.is_recording():
        current.set_attributes(clean(attributes))


def add_event(name: str, attributes: Mapping[str, Any] | None = None) -> None:
    current = trace.get_current_span()
    if current.is_recording():
        current.add_event(name, clean(attributes or {}))


__all__ = [
    "TRACER_NAME",
    "USER_HASH",
    "add_event",
    "clean",
    "set_attributes",
    "span",
    "tracer",
    "user_attributes",
    "user_hash",
]
