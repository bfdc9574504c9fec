"""`hymem eval locomo` and `hymem dashboard`: the evaluation harness and its HTML report."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from hymem.cli.app import EmbedderOpt, LlmOpt, app
from hymem.evaluation.systems import ALL_SYSTEMS
from rich.console import Console

eval_app = typer.Typer(help="Evaluate hymem and baselines on benchmarks.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")

_console = Console(stderr=True)


def _split(values: list[str] | None) -> list[str]:
    """Accepts both repeated options and comma-separated lists."""
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


@eval_app.command("locomo")
def eval_locomo(
    path: Annotated[Path, typer.Argument(help="LoCoMo-format JSON (e.g. locomo10-dev.json)")],
    conversations: Annotated[
        list[str] | None,
        typer.Option("--conversations", "-c", help="sample ids to run (default: all)"),
    ] = None,
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="judge model spec (e.g. openai:gpt-4.1-mini)")
    ] = None,
    systems: Annotated[
        str, typer.Option("--systems", help="comma-separated systems to run")
    ] = ",".join(ALL_SYSTEMS),
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="run folder (default runs/locomo-<time>)")
    ] = None,
    sleep: Annotated[bool, typer.Option("--sleep", help="consolidate before asking")] = False,
    adversarial: Annotated[
        bool, typer.Option("--adversarial", help="also ask category-5 questions")
    ] = False,
    workers: Annotated[int, typer.Option("--workers", min=1, help="questions in parallel")] = 4,
    limit_questions: Annotated[
        int | None, typer.Option("--limit-questions", min=1, help="per conversation")
    ] = None,
    retrieval_eval: Annotated[
        bool, typer.Option("--retrieval-eval/--no-retrieval-eval", help="recall@k per mode")
    ] = True,
) -> None:
    """Ingest LoCoMo conversations turn by turn, ask their questions with each system, score.

    Resumable: rerun with the same --out to finish an interrupted run."""
    from hymem.config import MemoryConfig
    from hymem.evaluation.runner import RunOptions, run_locomo

    overrides: dict[str, str] = {}
    if llm:
        overrides["llm"] = llm
    if embedder:
        overrides["embedder"] = embedder
    config = MemoryConfig(**overrides)  # HYMEM_* environment applies at this edge only
    out = out or Path("runs") / f"locomo-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    options = RunOptions(
        dataset=path,
        out=out,
        conversations=_split(conversations),
        systems=_split([systems]),
        sleep=sleep,
        adversarial=adversarial,
        workers=workers,
        limit_questions=limit_questions,
        judge=judge,
        retrieval_eval=retrieval_eval,
    )
    result = run_locomo(options, config)
    report = (out / "report.md").read_text(encoding="utf-8")
    typer.echo(report)
    _console.print(
        f"asked {result.asked}, skipped (already done) {result.skipped}, failed {result.failed}; "
        f"outputs in {out}"
    )
    if result.failed:
        _console.print(f"[yellow]{result.failed} questions failed; rerun to retry them[/]")


@app.command("dashboard")
def dashboard(
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write")],
    traces: Annotated[
        Path | None, typer.Option("--traces", help="memory folder whose traces to draw")
    ] = None,
    runs: Annotated[
        list[Path] | None, typer.Option("--runs", help="evaluation run folder(s)")
    ] = None,
) -> None:
    """Write one self-contained HTML page (no network needed to view it)."""
    from hymem.evaluation.dashboard import load_store_traces, write_dashboard

    trace_rows = load_store_traces(traces) if traces is not None else []
    write_dashboard(out, traces=trace_rows, runs=runs or [])
    _console.print(f"dashboard written to {out}")
