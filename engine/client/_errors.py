"""Where HTTP turns back into hymem: an error answer becomes the exception the server raised,
and a transport failure becomes `ServerUnavailable`, so no httpx exception reaches the caller.

The server answers an error as `{"error": <class name>, "message": <str(exc)>}`
(`hymem.serve.errors`). The class is looked up in `hymem.core.errors` by name and rebuilt with the
same message and, where a class keeps them, the same attributes (`NotFoundError.record_id`,
`InvalidMessageError.index`, `LLMError.role`), so `except hymem.NotFoundError` and what it
reads work the same embedded or served. Answers that are not hymem's (a proxy's 502, a wrong
base URL's 404) are told apart from the server's own by the missing body.
"""

from __future__ import annotations

import ast
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from hymem.core import errors as E

# Answers of the server itself that are not library errors (hymem.serve.app).
_WIRE_ONLY: dict[str, type[E.HymemError]] = {
    "Unauthorized": E.AuthError,
    "Forbidden": E.AuthError,
    "RequestValidationError": E.UserInputError,
    "PayloadTooLarge": E.UserInputError,
    "NotReady": E.ServerUnavailable,  # the server is still loading its embedder
    # A route or method this hymem server does not have: a base_url with a wrong path, or a
    # client newer than its server. The server's message names the route.
    "RouteNotFound": E.HymemError,
    "MethodNotAllowed": E.HymemError,
    "HTTPError": E.HymemError,
}
_NOT_FOUND = re.compile(r"no (\S+) (.+) for this user", re.DOTALL)
_INVALID_MESSAGE = re.compile(r"message (\d+)(?: \(id=(.+?)\))?: (.*)", re.DOTALL)
_ROLE = re.compile(r"\[([\w-]+)\] (.*)", re.DOTALL)


def error_from(response: httpx.Response, what: str) -> E.HymemError:
    """The exception an error answer stands for; `what` names the call for the message."""
    status = response.status_code
    body = _json(response)
    name, message = body.get("error"), body.get("message")
    if isinstance(name, str) and isinstance(message, str):
        if isinstance(body.get("detail"), list):  # 422: say which field, as pydantic would
            message += ": " + "; ".join(_detail(d) for d in body["detail"][:5])
        cls = _WIRE_ONLY.get(name) or _library_class(name)
        if cls is not None:
            return rebuild(cls, message, status)
    text = f"{what}: HTTP {status}, not an answer of a hymem server (is base_url right?)"
    if status in (401, 403):
        return E.AuthError(text, status_code=status)
    if status in (502, 503, 504):
        return E.ServerUnavailable(text, status_code=status)
    return E.HymemError(text)


def rebuild(cls: type[E.HymemError], message: str, status: int | None = None) -> E.HymemError:
    """An instance of `cls` whose str() is `message`, with the attributes the class keeps."""
    if issubclass(cls, E.AuthError | E.ServerUnavailable):
        return cls(message, status_code=status)
    if issubclass(cls, E.LLMError):
        role = _ROLE.fullmatch(message)
        return cls(role[2], role=role[1]) if role else cls(message)
    if issubclass(cls, E.NotFoundError):
        found = _NOT_FOUND.fullmatch(message)
        record_id = _literal(found[2]) if found else None
        if found and isinstance(record_id, str):
            return cls(found[1], record_id)
        return _bare(cls, message, kind=None, record_id=None)
    if issubclass(cls, E.InvalidMessageError):
        bad = _INVALID_MESSAGE.fullmatch(message)
        if bad:
            message_id = _literal(bad[2]) if bad[2] else None
            return cls(int(bad[1]), bad[3], message_id if isinstance(message_id, str) else None)
        return _bare(cls, message, index=None, reason=message, message_id=None)
    try:
        return cls(message)
    except TypeError:  # a class with its own constructor this module does not know yet
        return _bare(cls, message)


def unreachable(exc: httpx.TransportError, base_url: str, what: str) -> E.ServerUnavailable:
    """A connection, read or protocol failure as the hymem error a caller can catch."""
    if isinstance(exc, httpx.TimeoutException):
        reason = f"no answer in time ({type(exc).__name__})"
    else:
        reason = str(exc) or type(exc).__name__
    return E.ServerUnavailable(f"{what}: the memory server at {base_url} is unreachable: {reason}")


def retry_after(response: httpx.Response, attempt: int) -> float:
    """Seconds the server asked us to wait (delta or HTTP date); without a header, a short
    doubling pause (0.5 s, 1 s, 2 s, ...)."""
    value = response.headers.get("retry-after", "").strip()
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            pass
    return 0.5 * 2.0 ** max(0, attempt - 1)


def _library_class(name: str) -> type[E.HymemError] | None:
    cls = getattr(E, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, E.HymemError) else None


def _bare(cls: type[E.HymemError], message: str, **attrs: Any) -> E.HymemError:
    """`cls` built without its constructor: the message, and its attributes set as given."""
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    for key, value in attrs.items():
        setattr(exc, key, value)
    return exc


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)  # the server wrote the id with repr()
    except (ValueError, SyntaxError):
        return None


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _detail(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    loc = [str(p) for p in item.get("loc") or [] if p != "body"]
    return f"{'.'.join(loc) or 'body'}: {item.get('msg', 'invalid')}"


__all__ = ["error_from", "rebuild", "retry_after", "unreachable"]
