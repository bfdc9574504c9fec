"""Bringing histories in: `hymem ingest jsonl` and `hymem ingest locomo --ray` (bulk backfill,
`hymem.backfill`: users prepared in this process or on a Ray cluster, committed as they finish)
and `hymem import-chat` (one user's ChatGPT or Claude export, or JSON Lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, LlmOpt, StorePath, app
from hymem.cli.progress import progress_bar
from hymem.cli.write_cmds import _open, ingest_app
from rich.console import Console

_out = Console()
_err = Console(stderr=True)

RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help='prepare users on Ray: "local" (a runtime on this machine), "auto" or an address '
        "(needs hymem\\[ray])",
    ),
]
WorkersOpt = Annotated[int, typer.Option("--workers", "-w", min=1, help="Ray actors")]


def run_backfill(
    store: str | Path,
    llm: str | None,
    embedder: str | None,
    histories: list[Any],
    ray: str | None,
    workers: int,
) -> None:
    """Backfill `histories` with a progress bar over their turns, then print the report."""
    with (
        _open(store, llm, embedder) as mem,
        progress_bar(_err) as progress,
    ):
        task = progress.add_task("backfilling turns", total=sum(h.turn_count for h in histories))
        report = mem.backfill(
            histories, ray=ray, workers=workers, progress=lambda n: progress.advance(task, n)
        )
    rate = report.turns / report.seconds if report.seconds else 0.0
    _out.print(
        f"{report.users} user(s), {report.turns} turns in {report.seconds:.1f} s "
        f"({rate:.1f} turns/s, {report.runner}, {report.workers} worker(s)): "
        f"wrote {report.written_turns} turns, {report.segments} segments, "
        f"{report.summaries} summaries; {len(report.skipped)} user(s) already stored; "
        f"{report.pending} turn(s) left pending"
    )
    for user, why in sorted(report.failed.items()):
        _err.print(f"[yellow]{user}: not stored: {why}[/yellow]", highlight=False)
    if report.failed:
        raise typer.Exit(1)


@ingest_app.command("jsonl")
def ingest_jsonl(
    path: Annotated[Path, typer.Argument(help="JSON Lines of messages with user_id and text")],
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    ray: RayOpt = None,
    workers: WorkersOpt = 1,
) -> None:
    """Backfill many users' histories from JSON Lines (user_id, session_id, id, speaker, text,
    timestamp per line); re-running stores nothing twice and skips users already stored."""
    from hymem.backfill.histories import read_jsonl

    run_backfill(store, llm, embedder, read_jsonl(path), ray, workers)


@app.command("import-chat")
def import_chat_cmd(
    source: Annotated[Path, typer.Argument(help="conversations.json, or a JSON Lines file")],
    user: Annotated[str, typer.Option("--user", "-u", help="whose history this is")],
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="chatgpt | claude | jsonl")
    ] = "chatgpt",
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
) -> None:
    """Import a ChatGPT or Claude data export (conversations.json) or JSON Lines of messages
    as one user's turns: a conversation per session, the branch the user ended on, message ids
    kept (re-importing stores nothing twice); prints what was kept and what was skipped."""
    with (
        _open(store, llm, embedder) as mem,
        progress_bar(_err) as progress,
    ):
        task = progress.add_task("importing conversations", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        report = mem.import_chat(source, user_id=user, format=fmt, progress=advance)
    _out.print_json(report.model_dump_json())


__all__ = ["import_chat_cmd", "run_backfill"]
