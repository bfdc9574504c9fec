"""`hymem ask` and `hymem context`: the read path from the command line.

`ask` opens the folder for writing so its trace can be stored; when another process holds the
writer lock it falls back to read-only and answers anyway (the trace is then only logged).
Both load the models before the call, so its latency is its own and the load is reported
apart (`hymem.cli.notes`), and both say so when nothing was found while turns are pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from hymem.cli.app import (
    DEFAULT_STORE,
    EmbedderOpt,
    LlmOpt,
    StorePath,
    UserOpt,
    app,
    cli_config,
    open_memory,
)
from hymem.cli.meta_opts import AgentOpt, FilterOpt, RunOpt, parse_filter_json
from hymem.cli.notes import load_models, load_note, unseen_note
from hymem.core.config import MemoryConfig
from hymem.core.errors import StoreLockedError
from hymem.core.types import Answer, Hit
from hymem.read.params import ask_params
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from hymem.api.memory import Memory

_out = Console()
_err = Console(stderr=True)

DepthOpt = Annotated[str, typer.Option("--depth", "-d", help="auto | light | deep")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print machine-readable JSON")]


def _config_default(name: str) -> str:
    """How an option left out is set: its HYMEM_* variable, else MemoryConfig's default."""
    return f"HYMEM_{name.upper()} or {MemoryConfig.model_fields[name].default}"


def open_for_ask(store: str | Path, llm: str | None, embedder: str | None) -> Memory:
    try:
        return open_memory(store, llm=llm, embedder=embedder)
    except StoreLockedError:
        _err.print(
            "[yellow]store is being written by another process; answering read-only "
            "(no trace row will be stored)[/yellow]"
        )
        return open_memory(store, llm=llm, embedder=embedder, read_only=True)


def _evidence_table(hits: list[Hit]) -> Table:
    table = Table(title="evidence")
    for col in ("level", "id", "time", "score", "text"):
        table.add_column(col, overflow="fold" if col == "text" else "ellipsis")
    for hit in hits:
        when = hit.time_start.isoformat(sep=" ", timespec="minutes") if hit.time_start else ""
        text = hit.text if len(hit.text) <= 300 else hit.text[:297] + "..."
        table.add_row(hit.level.value, hit.id, when, f"{hit.fused_score:.4f}", text)
    return table


def _say(note: str | None) -> None:
    if note:
        _err.print(note, markup=False, highlight=False)


def _print_answer(ans: Answer, load_s: float) -> None:
    _out.print(f"[bold]{ans.text or '(no answer)'}[/bold]")
    route = f"path={ans.path} escalated={ans.escalated}"
    if ans.escalation_reason:
        route += f" ({ans.escalation_reason})"
    total = ans.usage.total
    _out.print(
        f"[dim]{route} iterations={ans.iterations} complete={ans.complete} "
        f"calls={total.calls} tokens={total.total_tokens} "
        f"latency={ans.latency_ms.get('total', 0.0):.0f} ms load={load_s * 1000:.0f} ms "
        f"backend={ans.backend} "
        f"trace={ans.trace_id}[/dim]"
    )
    if ans.budget_exhausted:
        _out.print("[yellow]the per-ask budget stopped escalation or reflection[/yellow]")
    for fallback in ans.fallbacks:
        _out.print(f"[yellow]fallback[/yellow] {fallback}")
    if ans.evidence:
        _out.print(_evidence_table(ans.evidence))


@app.command("ask")
def ask(
    question: Annotated[str, typer.Argument(help="the question to answer from memory")],
    user: UserOpt,
    depth: DepthOpt = "auto",
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            help="read the top k summaries instead of the light token budget",
            show_default=f"the budget, {_config_default('light_tokens')} tokens",
        ),
    ] = None,
    n_deep: Annotated[
        int | None,
        typer.Option("--n", help="deep coarse top-N", show_default=_config_default("n_deep")),
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch", help="selection batch size d", show_default=_config_default("select_batch")
        ),
    ] = None,
    max_iterations: Annotated[
        int | None,
        typer.Option(
            "--max-iterations",
            help="reflection rounds; 0 disables",
            show_default=_config_default("max_iterations"),
        ),
    ] = None,
    as_json: JsonOpt = False,
    filters: FilterOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
) -> None:
    """Answer a question: summaries first, raw dialogue when the light path says it must."""
    chosen = parse_filter_json(filters)
    ask_params(  # a mistake is reported before the memory opens and the models load
        question,
        user_id=user,
        config=cli_config(llm, embedder),
        depth=depth,
        k=k,
        N=n_deep,
        d=batch,
        max_iterations=max_iterations,
        filters=chosen,
        agent_id=agent,
        run_id=run,
    )
    with open_for_ask(store, llm, embedder) as mem:
        with _err.status("loading models", spinner="dots"):
            load_s = load_models(mem, roles=True)
        with _err.status("thinking", spinner="dots"):
            ans = mem.ask(
                question,
                user_id=user,
                depth=depth,  # type: ignore[arg-type]  # the option's text: Memory validates it
                k=k,
                N=n_deep,
                d=batch,
                max_iterations=max_iterations,
                filters=chosen,
                agent_id=agent,
                run_id=run,
            )
        unseen = None if ans.evidence else unseen_note(mem, user)
    if as_json:
        typer.echo(ans.model_dump_json())
    else:
        _print_answer(ans, load_s)
    _say(unseen)
    _say(load_note(load_s))


@app.command("context")
def context(
    question: Annotated[str, typer.Argument(help="the question to assemble context for")],
    user: UserOpt,
    depth: DepthOpt = "light",
    store: StorePath = DEFAULT_STORE,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    as_json: JsonOpt = False,
    filters: FilterOpt = None,
    agent: AgentOpt = None,
    run: RunOpt = None,
) -> None:
    """The context a path would read (for bringing your own answering model)."""
    chosen = parse_filter_json(filters)
    config = cli_config(llm, embedder)  # a mistake is reported before anything opens
    ask_params(question, user_id=user, config=config, depth=depth, filters=chosen)
    with open_memory(store, llm=llm, embedder=embedder, read_only=True) as mem:
        with _err.status("loading models", spinner="dots"):
            load_s = load_models(mem, roles=depth != "light")
        with _err.status("retrieving", spinner="dots"):
            hits = mem.context(
                question,
                user_id=user,
                depth=depth,  # type: ignore[arg-type]  # the option's text: Memory validates it
                filters=chosen,
                agent_id=agent,
                run_id=run,
            )
        unseen = None if hits else unseen_note(mem, user)
    if as_json:
        for hit in hits:
            typer.echo(hit.model_dump_json())
    elif not hits:
        _out.print("no context")
    else:
        _out.print(_evidence_table(hits))
    _say(unseen)
    _say(load_note(load_s))
