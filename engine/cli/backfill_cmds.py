"""Bringing histories in: `hymem ingest locomo` (turn by turn through `add`, or with `--ray` a
bulk backfill), `hymem ingest jsonl` (bulk backfill, `hymem.backfill`: users prepared in this
process or on a Ray cluster, committed as they finish) and `hymem import-chat` (one user's
ChatGPT or Claude export, or JSON Lines)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, LlmOpt, StorePath, app
from hymem.cli.help import HymemTyper
from hymem.cli.progress import progress_bar
from hymem.cli.write_cmds import _open
from hymem.core.errors import UserInputError
from hymem.core.types import AddResult
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

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

ingest_app = HymemTyper(help="Bulk-ingest datasets into a memory folder.", no_args_is_help=True)
app.add_typer(ingest_app, name="ingest")


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


@ingest_app.command("locomo")
def ingest_locomo(
    path: Annotated[Path, typer.Argument(help="LoCoMo-format JSON file")],
    conversations: Annotated[
        list[str] | None,
        typer.Option("--conversations", "-c", help="sample_ids to ingest (default: all)"),
    ] = None,
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    buffer_tokens: Annotated[
        int | None, typer.Option("--buffer-tokens", help="th: short-term buffer size")
    ] = None,
    compressor: Annotated[
        str | None, typer.Option("--compressor", help="local LLMLingua-2 model folder")
    ] = None,
    per_session: Annotated[
        bool, typer.Option("--per-session", help="add whole sessions instead of turn by turn")
    ] = False,
    ray: Annotated[
        str | None,
        typer.Option("--ray", help='backfill on Ray: "local", "auto" or an address (hymem\\[ray])'),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", "-w", min=1, help="Ray actors")] = 1,
) -> None:
    """Feed LoCoMo conversations turn by turn (user_id = sample_id), then flush each; with
    `--ray`, backfill them on Ray workers instead (`hymem ingest jsonl` says how)."""
    from hymem.backfill.locomo import conversation_messages, load_locomo

    convs = load_locomo(path)
    if conversations:
        wanted = set(conversations)
        unknown = wanted - {c.sample_id for c in convs}
        if unknown:
            raise UserInputError(f"unknown conversations: {', '.join(sorted(unknown))}")
        convs = [c for c in convs if c.sample_id in wanted]
    if ray is not None:
        from hymem.backfill.histories import locomo_histories

        run_backfill(store, llm, embedder, locomo_histories(convs), ray, workers)
        return
    rows = []
    with (
        _open(
            store, llm, embedder, buffer_tokens=buffer_tokens, compressor_model=compressor
        ) as mem,
        progress_bar(_err) as progress,
    ):
        task = progress.add_task("ingesting", total=sum(c.turn_count for c in convs))
        for conv in convs:
            progress.update(task, description=f"ingesting {conv.sample_id}")
            rows.append(_ingest_one(mem, conv, conversation_messages, progress, task, per_session))
    _summary_table(rows)


def _ingest_one(
    mem: Any, conv: Any, messages_of: Any, progress: Progress, task: Any, per_session: bool
) -> dict[str, Any]:
    started = time.perf_counter()
    total = AddResult()
    errors: list[str] = []

    def absorb(res: AddResult) -> None:
        total.segments_written.extend(res.segments_written)
        total.summaries_written.extend(res.summaries_written)
        total.usage.merge(res.usage)
        total.backend = res.backend or total.backend
        if res.error:
            errors.append(res.error)

    for session_id, when, msgs in messages_of(conv):
        chunks = [msgs] if per_session else [[m] for m in msgs]
        for chunk in chunks:
            if chunk:
                absorb(
                    mem.add(chunk, user_id=conv.sample_id, session_id=session_id, timestamp=when)
                )
            progress.advance(task, len(chunk))
    final = mem.flush(user_id=conv.sample_id)
    absorb(final)
    usage = total.usage.roles.get("summarise")
    return {
        "conversation": conv.sample_id,
        "turns": conv.turn_count,
        "segments": len(set(total.segments_written)),
        "summaries": len(set(total.summaries_written)),
        "calls": usage.calls if usage else 0,
        "tokens": usage.total_tokens if usage else 0,
        "pending": final.pending,
        "seconds": time.perf_counter() - started,
        "backend": total.backend,
        "errors": len(errors),
    }


def _summary_table(rows: list[dict[str, Any]]) -> None:
    """What was stored (Level-2 segments, Level-1 summaries) and what the summariser cost."""
    cols = {
        "conversation": "conv",
        "turns": "turns",
        "segments": "L2",
        "summaries": "L1",
        "calls": "calls",
        "tokens": "tokens",
        "pending": "pend",
        "seconds": "secs",
        "errors": "err",
    }
    backends = ", ".join(sorted({r["backend"] for r in rows if r["backend"]})) or "none"
    table = Table(title=f"stored and cost (summariser backend: {backends})")
    for key, header in cols.items():
        table.add_column(header, no_wrap=True, justify="left" if key == "conversation" else "right")
    for row in rows:
        table.add_row(*(f"{row[c]:.1f}" if c == "seconds" else str(row[c]) for c in cols))
    if len(rows) > 1:
        numeric = ("turns", "segments", "summaries", "calls", "tokens", "pending")
        table.add_row(
            "total",
            *(str(sum(r[c] for r in rows)) for c in numeric),
            f"{sum(r['seconds'] for r in rows):.1f}",
            str(sum(r["errors"] for r in rows)),
        )
    _out.print(table)


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


__all__ = ["import_chat_cmd", "ingest_app", "run_backfill"]
