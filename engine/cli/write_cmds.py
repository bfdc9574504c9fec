"""`hymem add`, `hymem flush` and `hymem pending`: the write path from the command line.
Messages come as JSON (a list or one object) or JSONL, from a file or stdin."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from hymem.cli.app import (
    DEFAULT_STORE,
    EmbedderOpt,
    LlmOpt,
    StorePath,
    UserOpt,
    app,
    cli_config,
)
from hymem.cli.meta_opts import AgentOpt, MetadataOpt, RunOpt, parse_metadata
from hymem.cli.notes import pending_note, plural
from hymem.core.errors import UserInputError
from hymem.core.types import AddResult
from rich.console import Console
from rich.table import Table

_out = Console()
_err = Console(stderr=True)

SessionOpt = Annotated[str, typer.Option("--session", help="session_id of these messages")]
TimeOpt = Annotated[
    str | None, typer.Option("--timestamp", "-t", help="time of turns that carry none")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print machine-readable JSON")]


def _open(
    store: str | Path,
    llm: str | None,
    embedder: str | None,
    *,
    read_only: bool = False,
    create: bool | None = None,
    **overrides: Any,
) -> Any:
    """A Memory with the CLI's overrides on top of HYMEM_* settings; `create` as in
    `open_memory` (adding creates a memory, flushing or listing needs one)."""
    from hymem.api.memory import Memory

    config = cli_config(llm, embedder)
    settings = {k: v for k, v in overrides.items() if v is not None}
    if settings:
        config = config.updated(**settings)
    return Memory(store, config=config, read_only=read_only, create=create)


def read_messages(text: str) -> list[dict[str, Any]]:
    """A JSON list, a single JSON object, or JSON Lines; UserInputError otherwise."""
    stripped = text.strip()
    if not stripped:
        raise UserInputError("no messages given (empty input)")
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        data = []
        for n, line in enumerate(stripped.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UserInputError(f"line {n}: not JSON or JSON Lines ({exc.msg})") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise UserInputError("expected a JSON list of messages, one message object, or JSONL")
    return data


def _report(result: AddResult, as_json: bool, *, user: str, buffer_tokens: int) -> None:
    """What the call stored; then, on stderr, what its pending turns mean."""
    note = pending_note(result.pending, user, buffer_tokens=buffer_tokens)
    if as_json:
        _out.print_json(result.model_dump_json())
    else:
        calls = result.usage.roles.get("summarise")
        _out.print(
            f"accepted {plural(len(result.turn_ids), 'turn')} ({len(result.new_turn_ids)} new);"
            f" wrote {plural(len(result.segments_written), 'segment')},"
            f" {plural(len(result.summaries_written), 'summary', 'summaries')};"
            f" {result.pending} pending; summariser calls={calls.calls if calls else 0}"
            f" backend={result.backend}"
        )
    if note and not result.error:
        _err.print(note, markup=False, highlight=False)
    if result.error:
        _err.print(f"[yellow]summariser failed, turns kept pending: {result.error}[/yellow]")


@app.command("add")
def add_cmd(
    user: UserOpt,
    path: Annotated[Path | None, typer.Argument(help="JSON/JSONL file; '-' or none: stdin")] = None,
    session: SessionOpt = "default",
    timestamp: TimeOpt = None,
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    as_json: JsonOpt = False,
    metadata: MetadataOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
    text_arg: Annotated[
        str | None, typer.Option("--text", help="one user message (instead of a file)")
    ] = None,
    flush: Annotated[
        bool, typer.Option("--flush", help="store the pending turns now: searchable at once")
    ] = False,
) -> None:
    """Add messages ({"speaker", "text", optional "timestamp", "id"}) as turns of USER, or
    with --text one message of speaker "user".

    Turns wait in a short-term buffer, pending and not yet searchable, until it holds enough
    to be segmented by topic and summarised (or the session changes); `hymem flush`, or
    --flush here, stores them now."""
    messages: list[dict[str, Any]] | str
    if text_arg is not None:
        if path is not None:
            raise UserInputError("give messages as a file/stdin or with --text, not both")
        messages = text_arg  # validated like any message: a blank text is refused
    else:
        messages = read_messages(_read_input(path))
    meta = parse_metadata(metadata)
    with _open(store, llm, embedder, flush_on_add=flush or None) as mem:
        result = mem.add(
            messages,
            user_id=user,
            session_id=session,
            timestamp=timestamp,
            metadata=meta,
            agent_id=agent,
            run_id=run,
        )
    _report(result, as_json, user=user, buffer_tokens=mem.config.buffer_tokens)


def _read_input(path: Path | None) -> str:
    """The file's text, or stdin's for none or '-': UTF-8, strictly (a byte that is not is a
    UserInputError naming where, never a U+FFFD stored in its place)."""
    where = "stdin" if path is None or str(path) == "-" else str(path)
    try:
        if path is None or str(path) == "-":
            stdin = getattr(sys.stdin, "buffer", None)
            data = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8")
        else:
            data = path.read_bytes()
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserInputError(
            f"{where}: not UTF-8 (byte {exc.start}: {exc.reason}); messages are UTF-8 JSON or JSONL"
        ) from None
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from exc


@app.command("flush")
def flush_cmd(
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Summarise and store every pending turn of USER now."""
    with _open(store, llm, embedder, create=False) as mem:
        result = mem.flush(user_id=user)
    _report(result, as_json, user=user, buffer_tokens=mem.config.buffer_tokens)
    if result.error:
        raise typer.Exit(1)


@app.command("pending")
def pending_cmd(
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    embedder: EmbedderOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the turns of USER accepted but not yet summarised (read-only: works while another
    process is writing)."""
    with _open(store, None, embedder, read_only=True, create=False) as mem:
        turns = mem.pending(user_id=user)
    if as_json:
        _out.print_json(json.dumps([t.model_dump(mode="json") for t in turns]))
        return
    table = Table(title=f"{plural(len(turns), 'pending turn')} of {user}")
    for col in ("seq", "id", "session", "time", "speaker", "text"):
        table.add_column(col, overflow="fold" if col == "text" else "ellipsis")
    for t in turns:
        when = t.timestamp.isoformat(sep=" ", timespec="minutes") if t.timestamp else ""
        table.add_row(str(t.seq), t.id, t.session_id, when, t.speaker, t.text[:200])
    _out.print(table)
