"""`hymem search`, `hymem stats`, `hymem reindex`: retrieval and maintenance, no LLM involved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from hymem.cli.app import (
    DEFAULT_STORE,
    EmbedderOpt,
    StorePath,
    UserOpt,
    app,
    cli_config,
    open_memory,
)
from hymem.cli.meta_opts import AgentOpt, FilterOpt, RunOpt, parse_filter_json
from hymem.cli.notes import load_models, load_note, unseen_note
from hymem.core.types import Hit
from hymem.indexes.folder.lock import CURSOR_KEY
from hymem.search.scope import search_scope
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

_console = Console()
_err = Console(stderr=True)


def _hits_table(hits: list[Hit]) -> Table:
    table = Table(show_lines=False)
    for col in ("#", "id", "time", "dense", "bm25", "fused", "text"):
        table.add_column(col, overflow="fold" if col == "text" else "ellipsis")
    for n, hit in enumerate(hits, start=1):
        table.add_row(
            str(n),
            hit.id,
            hit.time_start.isoformat(sep=" ", timespec="minutes") if hit.time_start else "",
            "" if hit.dense_score is None else f"{hit.dense_score:.3f}",
            "" if hit.lexical_score is None else f"{hit.lexical_score:.2f}",
            f"{hit.fused_score:.4f}",
            hit.text,
        )
    return table


@app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="free text; any characters are fine")],
    user: UserOpt,
    store: StorePath = DEFAULT_STORE,
    k: Annotated[int, typer.Option("-k", help="how many hits")] = 10,
    level: Annotated[str, typer.Option(help="summary | segment")] = "summary",
    mode: Annotated[str, typer.Option(help="hybrid | dense | lexical")] = "hybrid",
    include_inactive: Annotated[
        bool, typer.Option("--include-inactive", help="also superseded and deleted versions")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print hits as JSON lines")] = False,
    embedder: EmbedderOpt = None,
    filters: FilterOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
) -> None:
    """Hybrid retrieval (dense + BM25, fused by reciprocal rank) for one user. Turns still
    pending (see `hymem add`) are not searchable yet."""
    from hymem.api.internals import store_of  # hymem's own seam (loaded on use)

    chosen = parse_filter_json(filters)
    config = cli_config(embedder=embedder)  # a mistake is reported before anything opens
    search_scope(
        query,
        user_id=user,
        k=k,
        level=level,
        mode=mode,
        filters=chosen,
        agent_id=agent,
        run_id=run,
        max_k=config.max_k,
        max_query_chars=config.max_query_chars,
    )
    with open_memory(store, embedder=embedder, read_only=True) as mem:
        load_s = 0.0 if mode == "lexical" else load_models(mem)  # BM25 needs no model
        hits = mem.search(
            query,
            user_id=user,
            k=k,
            level=level,
            mode=mode,  # type: ignore[arg-type]  # the option's text: Memory validates it
            include_inactive=include_inactive,
            filters=chosen,
            agent_id=agent,
            run_id=run,
        )
        degraded = mode != "dense" and store_of(mem).lexical_unavailable
        unseen = None if hits else unseen_note(mem, user)
    if as_json:
        for hit in hits:
            typer.echo(hit.model_dump_json())
    else:
        if degraded:  # JSON hits carry it as `lexical_unavailable`
            _console.print(
                "lexical index unavailable: dense hits only (`hymem reindex` rebuilds it)"
            )
        _console.print(_hits_table(hits) if hits else "no hits")
    for note in (unseen, load_note(load_s)):
        if note:
            _err.print(note, markup=False, highlight=False)


@app.command("stats")
def stats(
    store: StorePath = DEFAULT_STORE,
    user: Annotated[str | None, typer.Option("--user", "-u", help="one user only")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """Row counts per table (optionally for one user) and the folder's metadata."""
    from hymem.api.internals import store_of  # hymem's own seam (loaded on use)

    with open_memory(store, embedder=embedder, read_only=True) as mem:
        counts = mem.stats(user_id=user)
        meta = {k: v for k, v in store_of(mem).meta().items() if k != CURSOR_KEY}  # a secret
        users = len(mem.users()) if user is None else 1
    if as_json:
        typer.echo(json.dumps({"counts": counts, "users": users, "meta": meta}))
        return
    table = Table("what", "value")
    for key, value in {**counts, "users": users}.items():
        table.add_row(key, str(value))
    for key, value in meta.items():
        table.add_row(key, str(value))
    _console.print(table)


@app.command("optimize")
def optimize(store: StorePath = DEFAULT_STORE, embedder: EmbedderOpt = None) -> None:
    """Compact the tables, prune old versions and build every due vector index now (what the
    background maintainer does as needed); for stores served to readers in other processes."""
    with open_memory(store, embedder=embedder) as mem, _console.status("optimizing tables"):
        mem.optimize()
    _console.print(f"{store}: optimized")


@app.command("upgrade")
def upgrade(store: StorePath = DEFAULT_STORE, embedder: EmbedderOpt = None) -> None:
    """Bring a folder written by an older hymem to this version's schema (a writer's open
    does it; readers refuse old folders until then)."""
    from hymem.api.internals import store_of  # hymem's own seam (loaded on use)

    with open_memory(store, embedder=embedder) as mem:
        version = store_of(mem).meta().get("schema_version")
    _console.print(f"{store}: schema version {version}")


@app.command("reindex")
def reindex(
    store: StorePath = DEFAULT_STORE,
    optimize: Annotated[
        bool, typer.Option("--optimize", help="also compact tables and build indexes")
    ] = False,
    embedder: EmbedderOpt = None,
) -> None:
    """Rebuild the lexical (Tantivy) index from LanceDB, the source of truth."""
    with open_memory(store, embedder=embedder) as mem:
        counts = mem.stats()
        total = counts["summaries"] + counts["segments"]
        columns = (TextColumn("reindex"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=_console, transient=False) as bar:
            task = bar.add_task("reindex", total=total)
            result = mem.reindex(progress=lambda n: bar.advance(task, n))
        if optimize:
            with _console.status("optimizing tables"):
                mem.optimize()
    _console.print(
        f"indexed {result.get('summary', 0)} summaries, {result.get('segment', 0)} segments"
    )


def _folder(store: str, command: str) -> Path:
    """doctor and repair read a folder's files; an object store has no folder to read."""
    from hymem.core.errors import UserInputError
    from hymem.indexes.location import is_remote_uri

    if is_remote_uri(store):
        raise UserInputError(
            f"`hymem {command}` works on local folders; on an object store each writer settles "
            "what a crashed writer left (README, 'On object storage'), and LanceDB's own "
            "versions restore a damaged table"
        )
    return Path(store)


@app.command("doctor")
def doctor(
    store: StorePath = DEFAULT_STORE,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """Read every table whole and compare it with the last commit's record; exit 1 if damaged."""
    from hymem.indexes.folder.doctor import diagnose

    with _console.status("reading every table"):
        found = diagnose(_folder(store, "doctor"))
    if as_json:
        typer.echo(json.dumps(found.as_dict(), default=str))
    else:
        table = Table("table", "version", "rows read", "last commit", "problem")
        for t in found.tables:
            table.add_row(
                t.name,
                str(t.version),
                str(t.rows),
                f"{t.recorded_rows} rows, v{t.recorded_version}",
                t.problem() or "ok",
            )
        _console.print(table)
        if found.journal_pending:
            _console.print("an unfinished commit is journaled: the next writer open settles it")
        _console.print("healthy" if found.healthy else "damaged: run `hymem repair`")
    if not found.healthy:
        raise typer.Exit(1)


@app.command("repair")
def repair(store: StorePath = DEFAULT_STORE) -> None:
    """Restore each damaged table to its newest readable version, then rebuild what is derived;
    says what was lost."""
    from hymem.indexes.folder.doctor import repair as run_repair

    with _console.status("repairing"):
        report = run_repair(_folder(store, "repair"))
    table = Table("table", "action", "version", "rows", "rows lost")
    for t in report.tables:
        version = f"{t.from_version} -> {t.to_version}" if t.to_version is not None else "-"
        table.add_row(t.name, t.action, version, str(t.rows), str(t.rows_lost))
    _console.print(table)
    _console.print(
        f"{report.turns_pending} turns pending again (the next flush summarises them), "
        f"{report.segments_removed} segments and {report.summaries_removed} summaries removed, "
        f"lexical index rebuilt ({report.lexical.get('summary', 0)} summaries)"
    )
