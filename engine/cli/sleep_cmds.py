"""`hymem sleep`, `hymem history`, `hymem restore`: sleep-time consolidation from the shell."""

from __future__ import annotations

from typing import Annotated

import typer
from hymem.cli.app import DEFAULT_STORE, EmbedderOpt, LlmOpt, StorePath, UserOpt, app, open_memory
from hymem.cli.progress import progress_bar
from hymem.core.types import SummaryRecord
from hymem.sleep.consolidator import SleepReport
from rich.console import Console
from rich.progress import (
    TaskID,
)
from rich.table import Table

_PHASES = {"queues": "building update queues", "decisions": "deciding", "apply": "applying"}


@app.command("sleep")
def sleep_cmd(
    store: StorePath = DEFAULT_STORE,
    user: Annotated[str | None, typer.Option("--user", "-u", help="only this user")] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", "-w", min=1, help="parallel model calls")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="decide and report, write nothing")
    ] = False,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
) -> None:
    """Consolidate the summary tier: merge refinements, retire contradicted facts, as versions."""
    console = Console(stderr=True)
    with open_memory(store, llm=llm, embedder=embedder) as mem, progress_bar(console) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(_PHASES.get(phase, phase), total=total)
            bar.update(tasks[phase], completed=done, total=total)

        report = mem.sleep(user_id=user, max_workers=workers, dry_run=dry_run, progress=progress)
    Console().print(report_table(report))
    if dry_run and report.planned:
        Console().print(planned_table(report))


@app.command("history")
def history_cmd(
    summary_id: Annotated[str, typer.Argument(help="any version's id")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    embedder: EmbedderOpt = None,
) -> None:
    """Every version of a summary, oldest first."""
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        chain = mem.history(summary_id, user_id=user)
    Console().print(versions_table(chain, f"history of {summary_id}"))


@app.command("restore")
def restore_cmd(
    summary_id: Annotated[str, typer.Argument(help="a superseded or deleted version's id")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    embedder: EmbedderOpt = None,
) -> None:
    """Reactivate a superseded or deleted version and retire the version that replaced it."""
    with open_memory(store, embedder=embedder) as mem:
        mem.restore(summary_id, user_id=user)
        chain = mem.history(summary_id, user_id=user)
    Console().print(versions_table(chain, f"restored {summary_id}"))


def report_table(report: SleepReport) -> Table:
    """The report as a two-column table (what `hymem sleep` prints)."""
    table = Table(title="sleep" + (" (dry run: nothing written)" if report.dry_run else ""))
    table.add_column("measure")
    table.add_column("value", justify="right")
    # The extractive backend's decisions and tokens are counted too, but no model made them.
    who = "extractive backend" if report.backend.startswith("extractive") else "model"
    rows: list[tuple[str, object]] = [
        ("backend", report.backend),
        ("users", len(report.users)),
        ("summaries scanned", report.summaries_scanned),
        ("queues built", report.queues_built),
        ("queue building (s)", f"{report.queue_seconds:.3f}"),
        *((f"decisions: {k}", v) for k, v in report.decisions.items()),
        (f"asked the {who}", report.asked),
        ("skipped (journal)", report.skipped_from_journal),
        ("settled (nothing new)", report.settled),
        ("failed (retried next sleep)", report.failed),
        ("repaired", report.repaired),
        ("fallback segments re-summarised", report.resummarised.replaced),
        ("fallback segments still waiting", report.resummarised.kept),
        ("new versions", report.new_versions),
        ("superseded", report.superseded),
        ("deleted", report.deleted),
        (f"{who.split()[0]} calls", report.model_calls),
        (
            f"{who.split()[0]} tokens (prompt / completion)",
            f"{report.prompt_tokens} / {report.completion_tokens}",
        ),
        ("seconds", f"{report.seconds:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    return table


def planned_table(report: SleepReport) -> Table:
    table = Table(title="planned changes")
    for col in ("user", "action", "target", "new text", "evidence"):
        table.add_column(col)
    for p in report.planned:
        table.add_row(p.user_id, p.action, p.target_id, p.text or "", p.evidence_id or "")
    return table


def versions_table(chain: list[SummaryRecord], title: str) -> Table:
    """One row per version: who wrote it (the write path, sleep or the user) and when."""
    table = Table(title=title)
    for col in ("v", "id", "status", "by", "when", "text", "reason"):
        table.add_column(col, overflow="fold", no_wrap=col in ("v", "status", "by"))
    for r in chain:
        by = {"summary": "write", "consolidated": "sleep"}.get(r.origin, r.origin)
        when = r.created_at.isoformat(sep=" ", timespec="minutes")
        reason = r.reason or ""
        if r.superseded_by:
            reason = f"{reason} (by {r.superseded_by})".strip()
        table.add_row(str(r.version), r.id, r.status.value, by, when, r.text, reason)
    return table


__all__ = ["history_cmd", "report_table", "restore_cmd", "sleep_cmd"]
