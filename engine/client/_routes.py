"""Which REST route serves each `Memory` method, and how a call's arguments become a request.

The table is the client's whole knowledge of the API. Arguments are bound against the `Memory`
method's own signature, so a call the library refuses for its shape (a missing `user_id`, an
unknown keyword) raises the same TypeError; path parameters go into the path, and the rest into
the route's request model from `hymem.serve.models` (POST/PUT) or the query string (GET/DELETE).
Building the body through the request model means a value of the wrong type fails here as a
UserInputError, before anything is sent, and a field the server gains costs the client nothing.
"""

from __future__ import annotations

import inspect
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from hymem.core.errors import UserInputError
from hymem.core.filters import Filter
from hymem.serve import models as M
from pydantic import BaseModel, ValidationError


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One HTTP request, ready for httpx."""

    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    json: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Route:
    """`method path`, its request model (None: arguments travel in the query string) and
    whether a 503 may be retried: only reads, which change nothing when repeated."""

    method: str
    path: str
    body: type[BaseModel] | None = None
    read: bool = False

    @property
    def path_params(self) -> list[str]:
        return [name for _, name, _, _ in string.Formatter().parse(self.path) if name]

    def build(
        self, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Outgoing:
        """The request for one call: `args`/`kwargs` as passed to the method, without self."""
        bound = signature.bind(None, *args, **kwargs)  # TypeError exactly as Memory raises it
        bound.apply_defaults()
        arguments = dict(list(bound.arguments.items())[1:])  # without self
        path = self.path.format(**{n: _path_value(n, arguments.pop(n)) for n in self.path_params})
        if self.body is None:
            params = {k: _query_value(v) for k, v in arguments.items() if v is not None}
            return Outgoing(self.method, path, params=params)
        body = _body(self.body, signature, arguments, where=f"{self.method} {self.path}")
        return Outgoing(self.method, path, json=body)


def _body(
    model: type[BaseModel], signature: inspect.Signature, arguments: dict[str, Any], where: str
) -> dict[str, Any]:
    """The JSON body: `arguments` validated by the route's request model."""
    fields = model.model_fields
    for name, value in arguments.items():  # e.g. sleep's max_workers: the server's own setting
        if name not in fields and value != signature.parameters[name].default:
            raise UserInputError(f"{where} does not take {name}: leave it at its default")
    try:
        body = model.model_validate({k: _plain(v) for k, v in arguments.items() if k in fields})
    except ValidationError as exc:
        raise UserInputError(_validation_message(exc)) from None
    # Defaults are left out, so a newer client works with an older server unless a call uses
    # what only the newer one has.
    return body.model_dump(mode="json", exclude_defaults=True)


# method name -> route; the routes `hymem.serve.routes` declares (a test holds them equal).
ROUTES: dict[str, Route] = {
    "add": Route("POST", "/v1/memories", M.AddRequest),
    "flush": Route("POST", "/v1/memories/flush", M.UserRequest),
    "get_all": Route("GET", "/v1/memories", read=True),
    "get": Route("GET", "/v1/memories/{memory_id}", read=True),
    "update": Route("PUT", "/v1/memories/{memory_id}", M.UpdateRequest),
    "delete": Route("DELETE", "/v1/memories/{memory_id}"),
    "history": Route("GET", "/v1/memories/{summary_id}/history", read=True),
    "restore": Route("POST", "/v1/versions/{summary_id}/restore", M.UserRequest),
    "search": Route("POST", "/v1/search", M.SearchRequest, read=True),
    "ask": Route("POST", "/v1/ask", M.AskRequest, read=True),
    "context": Route("POST", "/v1/context", M.ContextRequest, read=True),
    "traces": Route("GET", "/v1/traces", read=True),
    "replay": Route("POST", "/v1/traces/{trace_id}/replay", M.UserRequest, read=True),
    "sleep": Route("POST", "/v1/sleep", M.SleepRequest),
    "profile": Route("GET", "/v1/users/{user_id}/profile", read=True),
    "audit": Route("GET", "/v1/users/{user_id}/audit", read=True),
    "erase_user": Route("DELETE", "/v1/users/{user_id}"),
}
HEALTH = Route("GET", "/healthz", read=True)
DOT_SEGMENTS = frozenset({".", ".."})


def _path_value(name: str, value: Any) -> str:
    """One path segment, percent-encoded whole: an id holding '/' or '..' stays one segment.
    An id that is itself `.` or `..` goes as `%2E`s, which no URL library folds as a dot
    segment (httpx would send `/v1/users/../audit` as `/v1/audit`); the server decodes it."""
    if not isinstance(value, str) or not value.strip():
        raise UserInputError(f"{name} must be a non-empty string")
    segment = quote(value, safe="")
    return segment.replace(".", "%2E") if segment in DOT_SEGMENTS else segment


def _plain(value: Any) -> Any:
    """What pydantic can validate into a request field: a parsed Filter as its source."""
    return dict(value.source) if isinstance(value, Filter) else value


def _query_value(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Filter | Mapping):
        return json.dumps(_plain(value) if isinstance(value, Filter) else dict(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _validation_message(exc: ValidationError) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:5]]
    return "invalid argument: " + "; ".join(parts)


__all__ = ["HEALTH", "ROUTES", "Outgoing", "Route"]
