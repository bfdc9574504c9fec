"""hymem's typed errors as HTTP answers: caller mistakes are 4xx with the error's own message,
failures of what the server depends on are 5xx, and a model backend that is down is a 503 with
`Retry-After`, so a client knows to come back rather than to fix its request."""

from __future__ import annotations

from hymem import errors as E

# Most specific first: the first class an error is an instance of decides.
STATUS: list[tuple[type[Exception], int]] = [
    (E.NotFoundError, 404),
    (E.UserInputError, 400),
    (E.ReadOnlyStoreError, 409),
    (E.StoreLockedError, 503),
    (E.StoreClosedError, 503),
    (E.StorageFullError, 507),
    (E.LLMUnavailable, 503),
    (E.LLMError, 502),  # the server's backend refused or failed: not the caller's doing
    (E.HymemError, 500),
]
RETRY_AFTER_S = 5  # a backend outage or a store being closed: worth trying again shortly


def http_error(exc: Exception) -> tuple[int, dict[str, str], dict[str, str]]:
    """(status, body, headers) for one of hymem's errors."""
    status = next((code for kind, code in STATUS if isinstance(exc, kind)), 500)
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else {}
    return status, {"error": type(exc).__name__, "message": str(exc)}, headers


__all__ = ["RETRY_AFTER_S", "STATUS", "http_error"]
