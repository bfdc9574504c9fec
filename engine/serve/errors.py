"""hymem's typed errors as HTTP answers: caller mistakes are 4xx with the error's own message,
failures of what the server depends on are 5xx, and a model backend that is down is a 503 with
`Retry-After`, so a client knows to come back rather than to fix its request."""

from __future__ import annotations

from typing import Any

from hymem.core import errors as E
from pydantic import BaseModel

# Most specific first: the first class an error is an instance of decides.
STATUS: list[tuple[type[Exception], int]] = [
    (E.NotFoundError, 404),
    (E.UserInputError, 400),
    (E.ReadOnlyStoreError, 409),
    (E.CommitConflictError, 409),
    (E.StoreUnavailableError, 503),  # an object store outage: transient, come back
    (E.StoreLockedError, 503),
    (E.StoreClosedError, 503),
    (E.StorageFullError, 507),
    (E.LLMUnavailable, 503),
    (E.LLMError, 502),  # the server's backend refused or failed: not the caller's doing
    (E.HymemError, 500),
]
RETRY_AFTER_S = 5  # a backend outage or a store being closed: worth trying again shortly


class ErrorBody(BaseModel):
    """Every error answer of the server: the hymem error class (or a wire-only name such as
    `RequestValidationError`, `RouteNotFound`) and its message; a 422 adds the fields at fault."""

    error: str
    message: str
    detail: list[dict[str, Any]] | None = None


# The statuses every route may answer besides its success, documented in the OpenAPI schema
# with the one body they all share.
ERROR_STATUSES: dict[int, str] = {
    400: "a caller mistake (UserInputError)",
    401: "no key, or an unknown one",
    403: "the key is bound to other users",
    404: "no such record for this user, or no such route",
    405: "the route does not take this method",
    409: "a write on a read-only store, or a commit that conflicts with one already made",
    413: "the body is over the server's limit",
    422: "the body or a parameter is malformed or of the wrong type",
    500: "an error of the server itself",
    502: "the model backend failed",
    503: "the store or the model backend is unavailable for now (see Retry-After)",
    507: "the disk is full",
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text} for code, text in ERROR_STATUSES.items()
}
# Names of the HTTP-level errors (no hymem class) by status.
WIRE_NAMES = {404: "RouteNotFound", 405: "MethodNotAllowed"}


def http_error(exc: Exception) -> tuple[int, dict[str, str], dict[str, str]]:
    """(status, body, headers) for one of hymem's errors."""
    status = next((code for kind, code in STATUS if isinstance(exc, kind)), 500)
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else {}
    return status, {"error": type(exc).__name__, "message": str(exc)}, headers


__all__ = [
    "ERROR_RESPONSES",
    "ERROR_STATUSES",
    "RETRY_AFTER_S",
    "STATUS",
    "WIRE_NAMES",
    "ErrorBody",
    "http_error",
]
