"""Request bodies of the REST API. Each mirrors the keyword arguments of the `Memory` method it
calls (a test holds them equal), and responses are the library's own models, so the API, the
library and `hymem.client` cannot drift apart. Values are checked by the library, exactly as
for an in-process caller; these models only give the wire format its types, as strictly as the
library takes them: a count is a JSON integer (not "5", 5.0 or true), a flag a JSON boolean."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

Depth = Literal["auto", "light", "deep"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not ignored


class _Scoped(_Body):
    """Metadata selection, as `filters=`, `agent_id=`, `run_id=` on the library's reads."""

    filters: dict[str, Any] | None = None
    agent_id: str | None = None
    run_id: str | None = None


class AddRequest(_Body):
    user_id: str
    messages: list[dict[str, Any]] | dict[str, Any] | str
    session_id: str = "default"
    timestamp: datetime | str | None = None
    metadata: dict[str, Any] | None = None
    agent_id: str | None = None
    run_id: str | None = None
    request_id: str | None = None  # or the Idempotency-Key header


class UserRequest(_Body):
    user_id: str


class UpdateRequest(_Body):
    user_id: str
    text: str


class SearchRequest(_Scoped):
    user_id: str
    query: str
    k: StrictInt = 10
    level: Literal["summary", "segment"] = "summary"
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    since: datetime | str | None = None
    until: datetime | str | None = None
    include_inactive: StrictBool = False
    as_of: datetime | str | None = None


class AskRequest(_Scoped):
    user_id: str
    question: str
    depth: Depth = "auto"
    k: StrictInt | None = None
    N: StrictInt | None = None
    d: StrictInt | None = None
    max_iterations: StrictInt | None = None
    as_of: datetime | str | None = None


class ContextRequest(_Scoped):
    user_id: str
    question: str
    depth: Depth = "light"
    as_of: datetime | str | None = None


class SleepRequest(_Body):
    user_id: str | None = Field(None, description="one user; None sleeps every user (admin key)")
    dry_run: StrictBool = False


__all__ = [
    "AddRequest",
    "AskRequest",
    "ContextRequest",
    "SearchRequest",
    "SleepRequest",
    "UpdateRequest",
    "UserRequest",
]
