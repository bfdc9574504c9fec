"""The MCP server: one user's memory as nine tools an agent can call (Model Context Protocol,
official SDK v2, `MCPServer`).

The user is bound when the server is built, never taken from a call: no tool has a `user_id`
parameter, and an argument the schema does not name (a `user_id` a client slips in) is dropped
by the SDK's argument model before the tool runs. One agent runtime mounts one server per user,
so a client can only ever read and write the memory it was configured for.

Every tool calls the `Memory` method of the same meaning in a worker thread, so a slow ask or a
flush never stalls the event loop (and with it other calls on the same connection); results are
the library's own pydantic models, sent as structured content with the schema of that model.
Each tool's description ends with its arguments, each with what it means and its default
(`described`), for clients that show the description and not the input schema.
hymem's typed errors come back as tool errors (`isError`) carrying the error's class and message;
anything else is a crash the SDK reports as "Error executing tool <name>" without its text.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio.to_thread
from hymem.core.errors import HymemError, LLMUnavailable, StoreLockedError
from hymem.core.types import AddResult, Answer, Hit, SummaryRecord
from hymem.core.validation import check_user_id
from hymem.core.version import __version__
from hymem.manage.models import MemoryItem, Page
from hymem.manage.profile import Profile
from hymem.serve.errors import RETRY_AFTER_S
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from starlette.applications import Starlette

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "Long-term memory of one user (the server is bound to that user; no tool takes a user id). "
    "add_memory stores conversation turns; they become searchable once summarised (pass "
    "flush=true to do that now). search_memory retrieves memories without a model, ask_memory "
    "answers a question from them, list_memories and get_memory browse them, update_memory "
    "corrects one and delete_memory retires one (both keep the old version: restore_memory "
    "brings one back). get_profile lists what to keep in mind about the user."
)


class Message(BaseModel):
    """One conversation turn, in either shape `Memory.add` takes: `{"role", "content"}` (the
    chat format) or `{"speaker", "text"}`. Which pair is given, and that one is, is checked by
    `Memory.add` (its error names the message), as for a library caller."""

    model_config = ConfigDict(extra="forbid")

    role: str | None = Field(None, description="who said it: 'user', 'assistant' or a name")
    content: str | None = Field(None, description="what was said")
    speaker: str | None = Field(None, description="who said it (another name for role)")
    text: str | None = Field(None, description="what was said (another name for content)")
    timestamp: str | None = Field(
        None, description="when it was said (ISO 8601; without an offset it is taken as UTC)"
    )
    id: str | None = Field(None, description="your id for the turn: re-adding an id is a no-op")


MemoryId = Annotated[str, Field(description="id of a memory (a summary), as tools return it")]
Moment = Annotated[
    datetime | str | None,
    Field(description="an instant (ISO 8601 or a date); without an offset it is taken as UTC"),
]
AsOf = Annotated[
    datetime | str | None,
    Field(description="ask as of this instant: nothing later is retrieved (default: now)"),
]
K = Annotated[
    int, Field(ge=1, strict=True, description="how many results (at most the store's max_k)")
]
Depth = Annotated[
    Literal["auto", "light", "deep"],
    Field(description="light: summaries only; deep: raw dialogue too; auto: light, deep if needed"),
]


def tool_error(exc: HymemError) -> ToolError:
    """The tool error a client sees for one of hymem's errors: its class and its message, plus
    a hint to retry where the failure is temporary (the REST server's 503 + Retry-After)."""
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, LLMUnavailable | StoreLockedError):
        message += f" (temporary: retry in about {RETRY_AFTER_S} s)"
    return ToolError(message)


async def _run(call: Callable[[], T]) -> T:
    """Run one blocking Memory call in a worker thread. A cancelled request still waits for
    the thread, so a write that started is finished and never left half-done."""
    try:
        return await anyio.to_thread.run_sync(call)
    except HymemError as exc:
        raise tool_error(exc) from exc


def added_then_flushed(added: AddResult, flushed: AddResult) -> AddResult:
    """One AddResult for an add followed by a flush: the add's turns, what both wrote, the
    flush's pending count and error, and the model usage of both."""
    usage = added.usage.model_copy(deep=True)
    usage.merge(flushed.usage)
    return added.model_copy(
        update={
            "segments_written": added.segments_written + flushed.segments_written,
            "summaries_written": added.summaries_written + flushed.summaries_written,
            "pending": flushed.pending,
            "error": flushed.error or added.error,
            "usage": usage,
        }
    )


def _rows(messages: list[Message] | Message | str) -> list[dict[str, str]] | str:
    """What `Memory.add` gets: the messages as dicts without their empty fields; a plain string
    as it came (`Memory.add` reads it as what the user said)."""
    if isinstance(messages, str):
        return messages
    listed = [messages] if isinstance(messages, Message) else messages
    return [m.model_dump(exclude_none=True) for m in listed]


def described(fn: Callable[..., Any]) -> str:
    """A tool's description: `fn`'s docstring, then one line per argument with its default and
    its meaning (the description of its `Field`), so a client that shows the description alone
    still tells the agent how to call the tool."""
    lines = [inspect.cleandoc(fn.__doc__ or ""), "", "Arguments:"]
    for name, param in inspect.signature(fn, eval_str=True).parameters.items():
        meta = getattr(param.annotation, "__metadata__", ())
        info = next((m for m in meta if isinstance(m, FieldInfo)), None)
        meaning = info.description if info is not None and info.description else ""
        empty = param.default is inspect.Parameter.empty
        default = "required" if empty else f"default {json.dumps(param.default)}"
        lines.append(f"- {name} ({default}): {meaning}")
    return "\n".join(lines)


def tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[F], F]:
    """`server.tool`, with the description `described` writes."""

    def register(fn: F) -> F:
        return server.tool(annotations=annotations, description=described(fn))(fn)

    return register


READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
EDITS = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def build_mcp_server(memory: Memory, user_id: str) -> MCPServer:
    """An MCP server over the open `memory` (a `hymem.Memory`) for `user_id` alone. The caller
    owns the memory: it runs the server, then closes the memory once the server has stopped."""
    user = check_user_id(user_id)
    server: MCPServer = MCPServer(
        "hymem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    _add_write_tools(server, memory, user)
    _add_read_tools(server, memory, user)
    _add_manage_tools(server, memory, user)
    return server


def streamable_http_app(server: MCPServer, memory: Memory, *, host: str) -> Starlette:
    """The server's Streamable HTTP app (at /mcp), whose shutdown closes `memory` once the
    SDK's sessions have ended. Closing here, inside uvicorn's graceful shutdown, is the only
    sure place: after a SIGTERM uvicorn re-raises the signal once it has stopped, so code after
    `uvicorn.run` never runs. `host` turns on the SDK's DNS-rebinding guard for loopback."""
    app = server.streamable_http_app(host=host)
    sessions = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with sessions(app):
            yield
        await anyio.to_thread.run_sync(memory.close)

    app.router.lifespan_context = lifespan
    return app


def _add_write_tools(server: MCPServer, memory: Memory, user: str) -> None:
    @tool(server, WRITES)
    async def add_memory(
        messages: Annotated[
            Annotated[list[Message], Field(min_length=1)] | Message | str,
            Field(
                description="turns, in order: a list of {role, content} (or {speaker, text})"
                " messages, one such message, or a plain string (what the user said)"
            ),
        ],
        session_id: Annotated[str, Field(description="conversation the turns belong to")] = (
            "default"
        ),
        timestamp: Annotated[
            str | None, Field(description="when, for turns without their own timestamp")
        ] = None,
        flush: Annotated[
            bool,
            Field(
                strict=True,
                description="summarise pending turns now, so they are searchable at once",
            ),
        ] = False,
    ) -> AddResult:
        """Store conversation turns in the user's memory. Turns wait in a short-term buffer
        and are summarised once it fills (or now, with flush=true)."""
        rows = _rows(messages)

        def add() -> AddResult:
            result = memory.add(rows, user_id=user, session_id=session_id, timestamp=timestamp)
            if not flush or not result.pending:
                return result
            return added_then_flushed(result, memory.flush(user_id=user))

        return await _run(add)


def _add_read_tools(server: MCPServer, memory: Memory, user: str) -> None:
    @tool(server, READS)
    async def search_memory(
        query: Annotated[str, Field(description="what to look for")],
        k: K = 10,
        level: Annotated[
            Literal["summary", "segment"],
            Field(description="summary (condensed memories) or segment (raw dialogue)"),
        ] = "summary",
        mode: Annotated[
            Literal["hybrid", "dense", "lexical"],
            Field(description="hybrid (dense + keyword), dense or lexical (keyword) retrieval"),
        ] = "hybrid",
        since: Moment = None,
        until: Moment = None,
        include_inactive: Annotated[
            bool, Field(strict=True, description="also return superseded and deleted versions")
        ] = False,
        as_of: AsOf = None,
    ) -> list[Hit]:
        """Find the user's memories matching a query (hybrid dense + keyword retrieval, no
        model involved), best first."""
        return await _run(
            lambda: memory.search(
                query,
                user_id=user,
                k=k,
                level=level,
                mode=mode,
                since=since,
                until=until,
                include_inactive=include_inactive,
                as_of=as_of,
            )
        )

    @tool(server, READS)
    async def ask_memory(
        question: Annotated[str, Field(description="a question about the user's past")],
        depth: Depth = "auto",
        k: Annotated[int | None, Field(ge=1, strict=True, description="summaries to read")] = None,
        as_of: AsOf = None,
    ) -> Answer:
        """Answer a question from the user's memory, with the evidence it rests on."""
        return await _run(lambda: memory.ask(question, user_id=user, depth=depth, k=k, as_of=as_of))


def _add_manage_tools(server: MCPServer, memory: Memory, user: str) -> None:
    @tool(server, READS)
    async def get_memory(memory_id: MemoryId) -> MemoryItem:
        """One memory with its versions, the turns it rests on and its raw dialogue."""
        return await _run(lambda: memory.get(memory_id, user_id=user))

    @tool(server, READS)
    async def list_memories(
        level: Annotated[
            Literal["summary", "segment", "turn"],
            Field(description="summary, segment or turn: which records to list"),
        ] = "summary",
        status: Annotated[
            Literal["active", "superseded", "deleted", "pending", "stored", "all"] | None,
            Field(
                description="active, superseded or deleted (summaries), pending or stored"
                " (turns), or all; default: active summaries, every turn"
            ),
        ] = None,
        limit: Annotated[
            int, Field(ge=1, strict=True, description="records per page (at most 1,000)")
        ] = 100,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
    ) -> Page:
        """One page of the user's records in a stable order; pass next_cursor for the next."""
        return await _run(
            lambda: memory.get_all(
                user_id=user, level=level, status=status, limit=limit, cursor=cursor
            )
        )

    @tool(server, EDITS)
    async def update_memory(
        memory_id: MemoryId,
        text: Annotated[str, Field(description="the corrected memory")],
    ) -> SummaryRecord:
        """Correct a memory: a new version with this text replaces it (the old one is kept)."""
        return await _run(lambda: memory.update(memory_id, text, user_id=user))

    @tool(server, EDITS)
    async def delete_memory(memory_id: MemoryId) -> SummaryRecord:
        """Retire a memory; it stays in its history and can be restored."""
        return await _run(lambda: memory.delete(memory_id, user_id=user))

    @tool(server, READS)
    async def get_profile(
        max_tokens: Annotated[int, Field(description="budget of the listed facts", ge=1)] = 300,
    ) -> Profile:
        """The user's current facts, one line each: what to keep in mind about them."""
        return await _run(lambda: memory.profile(user_id=user, max_tokens=max_tokens))

    @tool(server, EDITS)
    async def restore_memory(
        version_id: Annotated[str, Field(description="a version id from the memory's history")],
    ) -> SummaryRecord:
        """Bring back one version of a memory (undo a correction, a delete or a supersession)."""
        return await _run(lambda: memory.restore(version_id, user_id=user))


TOOL_NAMES = (
    "add_memory",
    "search_memory",
    "ask_memory",
    "get_memory",
    "list_memories",
    "update_memory",
    "delete_memory",
    "restore_memory",
    "get_profile",
)

__all__ = [
    "INSTRUCTIONS",
    "TOOL_NAMES",
    "Message",
    "added_then_flushed",
    "build_mcp_server",
    "described",
    "streamable_http_app",
    "tool_error",
]
