"""`hymem list`, `get`, `update`, `delete`, `erase`, `export`, `import`: looking at, correcting
and removing what a memory holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, StorePath, UserOpt, app, open_memory
from hymem.cli.notes import unseen_note
from hymem.cli.sleep_cmds import versions_table
from hymem.core.types import SegmentRecord, SummaryRecord, TurnRecord
from hymem.manage.audit import UNSUPPORTED_BELOW, AuditReport
from hymem.manage.models import Page
from hymem.manage.profile import DEFAULT_PROFILE_TOKENS
from rich.console import Console
from rich.table import Table

_console = Console()
_err = Console(stderr=True)
_TITLES = {"summary": "summaries", "segment": "segments", "turn": "turns"}


def _row(rec: TurnRecord | SegmentRecord | SummaryRecord) -> list[str]:
    if isinstance(rec, TurnRecord):
        when = rec.timestamp.isoformat(sep=" ", timespec="minutes") if rec.timestamp else ""
        return [rec.id, rec.status.value, when, f"{rec.speaker}: {rec.text}"]
    when = rec.time_start.isoformat(sep=" ", timespec="minutes") if rec.time_start else ""
    status = rec.status.value if isinstance(rec, SummaryRecord) else ""
    return [rec.id, status, when, rec.text]


def _page_table(page: Page) -> Table:
    table = Table(title=_TITLES.get(page.level, page.level))
    for col in ("id", "status", "time", "text"):
        table.add_column(col, overflow="fold" if col == "text" else "ellipsis")
    for rec in page.items:
        table.add_row(*_row(rec))
    return table


@app.command("list")
def list_cmd(
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    level: Annotated[str, typer.Option(help="summary | segment | turn")] = "summary",
    status: Annotated[
        str | None,
        typer.Option(help="summaries: active|superseded|deleted|all; turns: pending|stored|all"),
    ] = None,
    limit: Annotated[int, typer.Option(help="records per page (1-1000)")] = 50,
    cursor: Annotated[str | None, typer.Option(help="the cursor a previous page printed")] = None,
    every: Annotated[bool, typer.Option("--all", help="page through everything")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON lines")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """List a user's memories (or raw segments, or turns), a page at a time."""
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        while True:
            page = mem.get_all(
                user_id=user,
                level=level,  # type: ignore[arg-type]  # the option's text: Memory validates it
                status=status,  # type: ignore[arg-type]  # the option's text: Memory validates it
                limit=limit,
                cursor=cursor,
            )
            if as_json:
                for rec in page.items:
                    typer.echo(rec.model_dump_json(exclude={"vector"}))
            else:
                _console.print(_page_table(page) if page.items else "nothing to list")
            cursor = page.next_cursor
            if not every or cursor is None:
                break
    if cursor and not every and not as_json:
        _console.print(f"next page: --cursor {cursor}")


@app.command("get")
def get_cmd(
    memory_id: Annotated[str, typer.Argument(help="a summary's id (any version)")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """One memory with its versions, the turns it rests on and its raw segments."""
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        item = mem.get(memory_id, user_id=user)
        chain = mem.history(memory_id, user_id=user)
    if as_json:
        typer.echo(item.model_dump_json())
        return
    _console.print(versions_table(chain, f"memory {memory_id}"))
    for turn in item.source_turns:
        _console.print(f"source turn {turn.id}: {turn.speaker}: {turn.text}")
    for segment in item.segments:  # its own first, then any a merged repeat came from
        _console.print(f"segment {segment.id}:\n{segment.text}")


@app.command("update")
def update_cmd(
    memory_id: Annotated[str, typer.Argument(help="the memory's id (any version's id works)")],
    text: Annotated[str, typer.Argument(help="the corrected text")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    embedder: EmbedderOpt = None,
) -> None:
    """Correct a memory: writes a new version (the old one stays in its history)."""
    with open_memory(store, embedder=embedder) as mem:
        new = mem.update(memory_id, text, user_id=user)
    _console.print(f"memory {new.memory_id}: version {new.version} ({new.id})")


@app.command("delete")
def delete_cmd(
    memory_id: Annotated[str, typer.Argument(help="the memory's id (any version's id works)")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    embedder: EmbedderOpt = None,
) -> None:
    """Delete a memory (as a version: `hymem restore` brings it back)."""
    with open_memory(store, embedder=embedder) as mem:
        tomb = mem.delete(memory_id, user_id=user)
    undo = f" (hymem restore {tomb.previous_id} to undo)" if tomb.previous_id else ""
    _console.print(f"deleted memory {tomb.memory_id}: version {tomb.id}{undo}")


@app.command("audit")
def audit_cmd(
    store: StorePath = DEFAULT_STORE,
    user: Annotated[
        str | None, typer.Option("--user", help="one user (default: every user)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the whole report as JSON")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """How healthy each user's memory is: unsupported summaries, duplicates, contradictions,
    ended facts still served, records without links.

    Exits 1 only when a memory is broken: a contradiction (two current values of one
    single-valued fact), an ended fact still served, or a record that lost its links.
    Duplicates and low support are listed for review and exit 0 (`hymem sleep` merges
    duplicates)."""
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        report = mem.audit(user_id=user)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _console.print(_audit_table(report))
        for u in report.users:
            for w in u.worst[:3]:
                if w.score < UNSUPPORTED_BELOW:
                    _console.print(f"  {u.user_id}: {w.score:.2f} {w.id} {w.text!r}")
    if not report.healthy:
        raise typer.Exit(1)


def _audit_table(report: AuditReport) -> Table:
    table = Table(title="memory health (hymem audit)")
    for col in (
        "user",
        "active",
        "mean support",
        "unsupported",
        "duplicate clusters",
        "contradictions",
        "ended but served",
        "unlinked",
        "healthy",
    ):
        table.add_column(col)
    for u in report.users:
        table.add_row(
            u.user_id,
            str(u.summaries),
            f"{u.mean_support:.2f}",
            str(u.unsupported),
            str(len(u.duplicate_clusters)),
            str(len(u.contradictions)),
            str(len(u.stale_served)),
            str(len(u.unlinked_summaries) + len(u.unlinked_segments)),
            "yes" if u.healthy else "no",
        )
    return table


@app.command("profile")
def profile_cmd(
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", help="budget of the listed facts")
    ] = DEFAULT_PROFILE_TOKENS,
    embedder: EmbedderOpt = None,
) -> None:
    """The user's current facts, one line each: what an agent puts in its system prompt."""
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        profile = mem.profile(user_id=user, max_tokens=max_tokens)
        unseen = None if profile.facts else unseen_note(mem, user)
    if not profile.facts:
        _console.print(f"no facts recognised for {user!r} yet (see `hymem list`)")
        if unseen:  # facts come from stored summaries: pending turns have none yet
            _err.print(unseen, markup=False, highlight=False)
        return
    typer.echo(profile.text)
    if profile.left_out:
        _console.print(f"{profile.left_out} more facts past {max_tokens} tokens")


@app.command("erase")
def erase_cmd(
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    yes: Annotated[bool, typer.Option("--yes", help="do not ask for confirmation")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """Erase a user for real: every record, version, trace and cached reply, off the disk."""
    if not yes:
        typer.confirm(
            f"Erase everything of user {user!r} from {store}? This cannot be undone", abort=True
        )
    with open_memory(store, embedder=embedder) as mem:
        report = mem.erase_user(user)
    typer.echo(json.dumps(report.model_dump()))


@app.command("export")
def export_cmd(
    user: UserOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="the JSON Lines file to write")],
    store: StorePath = DEFAULT_STORE,
    embedder: EmbedderOpt = None,
) -> None:
    """Write every turn, segment and summary version of a user to a JSON Lines file."""
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        report = mem.export(out, user_id=user)
    typer.echo(json.dumps(report.model_dump()))


@app.command("import")
def import_cmd(
    source: Annotated[Path, typer.Argument(help="a file `hymem export` wrote")],
    store: StorePath = DEFAULT_STORE,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="import as this user (default: the file's)")
    ] = None,
    embedder: EmbedderOpt = None,
) -> None:
    """Read an export into this memory (re-embedded with this memory's embedder)."""
    with open_memory(store, embedder=embedder, create=None) as mem:
        report = mem.import_records(source, user_id=user)
    typer.echo(json.dumps(report.model_dump()))


__all__ = ["delete_cmd", "erase_cmd", "export_cmd", "get_cmd", "import_cmd", "list_cmd"]
