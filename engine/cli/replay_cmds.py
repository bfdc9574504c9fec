"""`hymem replay TRACE`: what a past ask read and answered, beside the same question today.

It opens the store for writing, like `hymem ask`, so the new ask's trace is stored too; when
another process holds the writer lock it replays read-only (the new trace is only logged)."""

from __future__ import annotations

from typing import Annotated

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, LlmOpt, StorePath, UserOpt, app
from hymem.cli.read_cmds import JsonOpt, open_for_ask
from hymem.read.replay import ReadRecord, Replay, ReplaySide
from rich.console import Console
from rich.table import Table

_out = Console()
_err = Console(stderr=True)
_CHANGED = {"superseded": "replaced since", "deleted": "deleted since", "missing": "erased since"}


def _records(title: str, records: list[ReadRecord]) -> Table:
    table = Table(title=title, title_justify="left")
    for col in ("level", "id", "now", "text"):
        table.add_column(col, overflow="fold" if col == "text" else "ellipsis")
    for r in records:
        text = r.text if r.text is not None else "(erased)"
        text = text if len(text) <= 300 else text[:297] + "..."
        now = _CHANGED.get(r.status_now, "")
        table.add_row(r.level, r.id, f"[yellow]{now}[/yellow]" if now else "", text)
    return table


def _side(name: str, side: ReplaySide) -> None:
    route = f"path={side.path} escalated={side.escalated} complete={side.complete}"
    _out.print(f"[bold]{name}[/bold]: {side.answer or '(no answer)'}")
    _out.print(f"[dim]{route} trace={side.trace_id}[/dim]")
    _out.print(_records(f"{name}: read", [*side.summaries, *side.segments]))


def _side_by_side(replay: Replay) -> Table:
    table = Table(show_header=True)
    table.add_column("")
    table.add_column("then", overflow="fold")
    table.add_column("now", overflow="fold")
    then, now = replay.then, replay.now
    table.add_row("answer", then.answer or "(no answer)", now.answer or "(no answer)")
    table.add_row("path", str(then.path), str(now.path))
    table.add_row("escalated", str(then.escalated), str(now.escalated))
    table.add_row("summaries read", str(len(then.summaries)), str(len(now.summaries)))
    table.add_row("segments read", str(len(then.segments)), str(len(now.segments)))
    changed = len([r for r in (*then.summaries, *then.segments) if r.status_now != "active"])
    table.add_row("changed since", str(changed), "")
    table.add_row("trace", then.trace_id, now.trace_id)
    return table


def print_replay(replay: Replay) -> None:
    asked = replay.asked_at.isoformat(sep=" ", timespec="seconds")
    as_of = f" as of {replay.as_of.isoformat(sep=' ')}" if replay.as_of else ""
    _out.print(f"[bold]{replay.question}[/bold]  [dim](asked {asked} UTC{as_of})[/dim]")
    _out.print(_side_by_side(replay))
    _side("then", replay.then)
    _side("now", replay.now)
    verdict = "the same answer" if replay.same_answer else "a different answer"
    _out.print(
        f"{verdict}; {len(replay.no_longer_read)} record(s) no longer read, "
        f"{len(replay.newly_read)} newly read"
    )


@app.command("replay")
def replay(
    trace_id: Annotated[str, typer.Argument(help="the trace id of a past ask (Answer.trace_id)")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what a past ask read and answered, and ask it again against today's memory."""
    with open_for_ask(store, llm, embedder) as mem, _err.status("replaying", spinner="dots"):
        result = mem.replay(trace_id, user_id=user)
    if as_json:
        typer.echo(result.model_dump_json())
    else:
        print_replay(result)
