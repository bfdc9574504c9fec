"""The REST routes. Each authenticates the caller, checks that its key may act for the user the
request names, and calls the `Memory` method of the same name with the request's fields.

Every request names its user (in the body, or as `user_id` in the query); a key bound to other
users gets 403 whether or not that user or record exists, and a record id of another user is
404 exactly like an unknown one, so nothing about other tenants leaks.

A read that finds nothing while the user has turns not yet summarised says so in headers
(`X-Hymem-Pending`: how many, `X-Hymem-Hint`: flush them), as the library logs a warning; the
bodies keep their shape. Routes that embed answer 503 with `Retry-After` while the embedder
still loads (`Warming`), rather than hold the request for the load.

Ids in a path are matched as the client sent them, percent-encoded (`IdRoute`): every id the API
accepts in a body (`team/alice`, `a?b`, `..`) reaches the routes that name it in their path."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, cast
from urllib.parse import quote, unquote

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from hymem.core.errors import UserInputError
from hymem.core.types import AddResult, Answer, Hit, SummaryRecord
from hymem.manage.audit import AuditReport
from hymem.manage.erase import ErasureReport
from hymem.manage.models import MemoryItem, Page, RecordLevel, StatusFilter
from hymem.manage.profile import DEFAULT_PROFILE_TOKENS, Profile
from hymem.read.replay import Replay
from hymem.serve.auth import Binding, KeyRing
from hymem.serve.models import (
    AddRequest,
    AskRequest,
    ContextRequest,
    SearchRequest,
    SleepRequest,
    UpdateRequest,
    UserRequest,
)
from hymem.sleep.consolidator import SleepReport
from starlette.routing import Match
from starlette.types import Scope

if TYPE_CHECKING:
    from hymem.api.memory import Memory


class IdRoute(APIRoute):
    """A route whose path parameters are ids, matched on the path as the client sent it (ASGI
    `raw_path`), each parameter percent-decoded once matched. The server's decoded path has
    lost where a segment ends: `/v1/users/team%2Falice` arrives as `/v1/users/team/alice`, which
    `{user_id}` cannot match, so an erasure of `team/alice` would answer 404 and leave the data.
    Matched before decoding, an encoded `/` stays inside its id, `x%2Fhistory` is never the
    history of `x`, and dot segments sent as `%2E` are ids like any other. Routes without path
    parameters match as usual."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or not self.param_convertors:
            return super().matches(scope)
        match, child = super().matches({**scope, "path": sent_path(scope)})
        if match is not Match.NONE:
            params = child["path_params"]
            for name in self.param_convertors:
                params[name] = unquote(params[name])
        return match, child


def sent_path(scope: Scope) -> str:
    """The request's path still percent-encoded (ASCII): `raw_path` without its query (some
    servers keep it there), any raw non-ASCII byte encoded. The decoded path, re-encoded, where
    the server gives no `raw_path` or routing changed the path (a retry without the trailing
    slash, to redirect to it)."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes):
        sent = quote(raw.partition(b"?")[0], safe="/%")
        if unquote(sent) == scope["path"]:
            return sent
    return quote(scope["path"], safe="/")


router = APIRouter(route_class=IdRoute)
ALL_USERS = Binding("", prefix=True)


class Settings:
    """What the routes need from the app: the memory and who may call it."""

    def __init__(self, memory: Memory, keys: KeyRing, *, open_mode: bool) -> None:
        self.memory = memory
        self.keys = keys
        self.open_mode = open_mode


def settings_of(request: Request) -> Settings:
    """The app's `Settings` (`app.create_app` puts them in Starlette's untyped app state)."""
    settings: Settings = request.app.state.hymem
    return settings


class Denied(Exception):
    """401 (no or unknown key) or 403 (a key for other users); see `app.create_app`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Warming(Exception):
    """503 with Retry-After: the embedder is still loading (see `app.create_app`)."""


# The scheme `caller` checks, declared so the OpenAPI document has it (/docs' Authorize).
BEARER = HTTPBearer(
    scheme_name="APIKey",
    description="an API key as a bearer token: `Authorization: Bearer <key>` (hymem keys new)",
    auto_error=False,
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]


def caller(request: Request, credentials: Credentials = None) -> Binding:
    settings = settings_of(request)
    if settings.open_mode:
        return ALL_USERS
    binding = None if credentials is None else settings.keys.binding(credentials.credentials)
    if binding is None:
        raise Denied(401, "a valid API key is required: Authorization: Bearer <key>")
    return binding


Caller = Annotated[Binding, Depends(caller)]


def embedder_ready(request: Request, key: Caller) -> None:
    """For routes that embed: `Warming` while the embedder loads (after the key is checked,
    so a caller without one still learns that first)."""
    readiness = getattr(request.app.state, "hymem_readiness", None)
    if readiness is not None and not readiness.warmup.done:
        raise Warming("the embedder is still loading: retry shortly (GET /readyz says when)")


EMBEDS = [Depends(embedder_ready)]
PENDING_HINT = "pending turns become searchable when flushed: POST /v1/memories/flush"


def hint_pending(response: Response, mem: Memory, user_id: str) -> None:
    """For a read that found nothing: the user's pending turns, if any, in headers."""
    waiting = len(mem.pending(user_id=user_id))
    if waiting:
        response.headers["X-Hymem-Pending"] = str(waiting)
        response.headers["X-Hymem-Hint"] = PENDING_HINT


UserQuery = Annotated[str, Query(description="the user the call acts for")]


def memory_for(request: Request, key: Binding, user_id: str | None) -> Memory:
    """The memory, once `key` may act for `user_id` (None: every user, an admin key only)."""
    allowed = key == ALL_USERS if user_id is None else key.allows(user_id)
    if not allowed:
        raise Denied(403, "this API key may not act for that user")
    return settings_of(request).memory


@router.get("/healthz")
def healthz(request: Request) -> dict[str, Any]:
    memory = settings_of(request).memory
    return {"status": "ok", "read_only": memory.read_only}


# --- memories -----------------------------------------------------------------------------
@router.post("/v1/memories", response_model=AddResult)
def add(
    body: AddRequest,
    request: Request,
    key: Caller,
    idempotency_key: Annotated[
        str | None, Header(description="the add's request id (as `request_id` in the body)")
    ] = None,
) -> AddResult:
    """`Idempotency-Key`, the HTTP way to name a request, is the body's `request_id`: the
    same add sent again under it stores nothing twice."""
    mem = memory_for(request, key, body.user_id)
    fields = body.model_dump(exclude={"messages", "user_id"})
    if idempotency_key is not None:
        if body.request_id not in (None, idempotency_key):
            raise UserInputError(
                "the Idempotency-Key header and request_id name different requests: send one,"
                " or the same id in both"
            )
        fields["request_id"] = idempotency_key
    return mem.add(body.messages, user_id=body.user_id, **fields)


@router.post("/v1/memories/flush", response_model=AddResult, dependencies=EMBEDS)
def flush(body: UserRequest, request: Request, key: Caller) -> AddResult:
    return memory_for(request, key, body.user_id).flush(user_id=body.user_id)


@router.get("/v1/memories", response_model=Page)
def list_memories(
    request: Request,
    key: Caller,
    user_id: UserQuery,
    level: str = "summary",
    status: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
    filters: Annotated[str | None, Query(description="a metadata filter as JSON")] = None,
    agent_id: str | None = None,
    run_id: str | None = None,
) -> Page:
    mem = memory_for(request, key, user_id)
    # The query's strings go on unchecked: Memory checks them (a UserInputError, 400, names a
    # wrong one) as it checks a library caller's.
    return mem.get_all(
        user_id=user_id,
        level=cast(RecordLevel, level),
        status=cast(StatusFilter | None, status),
        limit=limit,
        cursor=cursor,
        filters=_json_filter(filters),
        agent_id=agent_id,
        run_id=run_id,
    )


def _json_filter(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise UserInputError("filters must be a JSON object") from None


@router.get("/v1/memories/{memory_id}", response_model=MemoryItem)
def get_memory(memory_id: str, request: Request, key: Caller, user_id: UserQuery) -> MemoryItem:
    return memory_for(request, key, user_id).get(memory_id, user_id=user_id)


@router.put("/v1/memories/{memory_id}", response_model=SummaryRecord, dependencies=EMBEDS)
def update_memory(
    memory_id: str, body: UpdateRequest, request: Request, key: Caller
) -> SummaryRecord:
    mem = memory_for(request, key, body.user_id)
    return mem.update(memory_id, body.text, user_id=body.user_id)


@router.delete("/v1/memories/{memory_id}", response_model=SummaryRecord)
def delete_memory(
    memory_id: str, request: Request, key: Caller, user_id: UserQuery
) -> SummaryRecord:
    return memory_for(request, key, user_id).delete(memory_id, user_id=user_id)


@router.get("/v1/memories/{memory_id}/history", response_model=list[SummaryRecord])
def history(
    memory_id: str, request: Request, key: Caller, user_id: UserQuery
) -> list[SummaryRecord]:
    return memory_for(request, key, user_id).history(memory_id, user_id=user_id)


@router.post("/v1/versions/{summary_id}/restore", response_model=SummaryRecord)
def restore(summary_id: str, body: UserRequest, request: Request, key: Caller) -> SummaryRecord:
    """Reactivate one version (a version id from `history`) and retire what replaced it."""
    return memory_for(request, key, body.user_id).restore(summary_id, user_id=body.user_id)


# --- reading --------------------------------------------------------------------------------
@router.post("/v1/search", response_model=list[Hit], dependencies=EMBEDS)
def search(body: SearchRequest, request: Request, response: Response, key: Caller) -> list[Hit]:
    mem = memory_for(request, key, body.user_id)
    hits = mem.search(body.query, **body.model_dump(exclude={"query"}))
    if not hits:
        hint_pending(response, mem, body.user_id)
    return hits


@router.post("/v1/ask", response_model=Answer, dependencies=EMBEDS)
def ask(body: AskRequest, request: Request, response: Response, key: Caller) -> Answer:
    mem = memory_for(request, key, body.user_id)
    answer = mem.ask(body.question, **body.model_dump(exclude={"question"}))
    if not answer.evidence:
        hint_pending(response, mem, body.user_id)
    return answer


@router.post("/v1/context", response_model=list[Hit], dependencies=EMBEDS)
def context(body: ContextRequest, request: Request, response: Response, key: Caller) -> list[Hit]:
    mem = memory_for(request, key, body.user_id)
    hits = mem.context(body.question, **body.model_dump(exclude={"question"}))
    if not hits:
        hint_pending(response, mem, body.user_id)
    return hits


@router.get("/v1/traces")
def traces(
    request: Request, key: Caller, user_id: UserQuery, since: datetime | str | None = None
) -> list[Any]:
    return memory_for(request, key, user_id).traces(user_id=user_id, since=since)


@router.post("/v1/traces/{trace_id}/replay", response_model=Replay, dependencies=EMBEDS)
def replay(trace_id: str, body: UserRequest, request: Request, key: Caller) -> Replay:
    """What a past ask read and answered, beside the same question asked now (`Memory.replay`);
    the new ask leaves its own trace."""
    return memory_for(request, key, body.user_id).replay(trace_id, user_id=body.user_id)


# --- maintenance and erasure ------------------------------------------------------------------
@router.post("/v1/sleep", response_model=SleepReport, dependencies=EMBEDS)
def sleep(body: SleepRequest, request: Request, key: Caller) -> SleepReport:
    mem = memory_for(request, key, body.user_id)
    return mem.sleep(user_id=body.user_id, dry_run=body.dry_run)


@router.get("/v1/users/{user_id}/audit", response_model=AuditReport)
def audit(user_id: str, request: Request, key: Caller) -> AuditReport:
    """The health of the user's memory (`Memory.audit`)."""
    return memory_for(request, key, user_id).audit(user_id=user_id)


@router.get("/v1/users/{user_id}/profile", response_model=Profile)
def profile(
    user_id: str, request: Request, key: Caller, max_tokens: int = DEFAULT_PROFILE_TOKENS
) -> Profile:
    """The user's current facts within `max_tokens` (`Memory.profile`)."""
    return memory_for(request, key, user_id).profile(user_id=user_id, max_tokens=max_tokens)


@router.delete("/v1/users/{user_id}", response_model=ErasureReport)
def erase_user(user_id: str, request: Request, key: Caller) -> ErasureReport:
    return memory_for(request, key, user_id).erase_user(user_id)


__all__ = [
    "ALL_USERS",
    "BEARER",
    "PENDING_HINT",
    "Denied",
    "IdRoute",
    "Warming",
    "caller",
    "embedder_ready",
    "router",
    "sent_path",
]
