"""`hymem eval locomo`, `hymem eval longmemeval` and `hymem dashboard`: the evaluation
harnesses and their HTML report."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from hymem.cli.app import EmbedderOpt, LlmOpt, app
from hymem.cli.help import HymemTyper
from hymem.evaluation.locomo_format import Phrasing
from hymem.evaluation.longmemeval.systems import RETRIEVAL_SYSTEMS as LME_SYSTEMS
from hymem.evaluation.systems import ALL_SYSTEMS
from rich.console import Console

if TYPE_CHECKING:
    from hymem.core.config import MemoryConfig

eval_app = HymemTyper(help="Evaluate hymem and baselines on benchmarks.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")

_console = Console(stderr=True)


def _split(values: list[str] | None) -> list[str]:
    """Accepts both repeated options and comma-separated lists."""
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def _config(llm: str | None, embedder: str | None) -> MemoryConfig:
    """The run's configuration: HYMEM_* environment applies at this edge only."""
    from hymem.core.config import MemoryConfig

    overrides: dict[str, str] = {}
    if llm:
        overrides["llm"] = llm
    if embedder:
        overrides["embedder"] = embedder
    return MemoryConfig(**overrides)


def _default_out(benchmark: str) -> Path:
    return Path("runs") / f"{benchmark}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


# The exit status of a process stopped by SIGINT (128 + 2), as shells report Ctrl-C.
INTERRUPTED_EXIT = 130


@contextmanager
def _resumable(out: Path) -> Iterator[None]:
    """Ctrl-C stops the run with one line saying how to resume it, and exit status 130. The
    folder is named, since a default one (runs/<benchmark>-<time>) is new on every run."""
    try:
        yield
    except KeyboardInterrupt:
        _console.print(
            "interrupted; rerun the same command to resume"
            f" (with --out {shlex.quote(str(out))}: finished answers are kept there)",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(INTERRUPTED_EXIT) from None


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
        str,
        typer.Option(
            "--systems",
            help="comma-separated systems to run (naive-rag-k<N>: any N up to 1000)",
            show_default=", ".join(ALL_SYSTEMS),  # with spaces, so the help can wrap it
        ),
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
    per_category: Annotated[
        int | None,
        typer.Option(
            "--per-category",
            min=1,
            help="the first N questions of each category per conversation (a sample that spans"
            " every category)",
        ),
    ] = None,
    no_retrieval_eval: Annotated[
        bool, typer.Option("--no-retrieval-eval", help="skip scoring recall@k per mode")
    ] = False,
    phrasing: Annotated[
        Phrasing,
        typer.Option(
            "--phrasing",
            help=(
                "extractive backend only: word relative dates as LoCoMo's gold answers do "
                "('the Friday before 15 July 2023', locomo) or as hymem does by default "
                "('14 July 2023', general)"
            ),
        ),
    ] = "locomo",
) -> None:
    """Ingest LoCoMo conversations turn by turn, ask their questions with each system, score.

    Resumable: rerun with the same --out to finish an interrupted run."""
    from hymem.evaluation.runner import RunOptions, run_locomo

    config = _config(llm, embedder)
    out = out or _default_out("locomo")
    options = RunOptions(
        dataset=path,
        out=out,
        conversations=_split(conversations),
        systems=_split([systems]),
        sleep=sleep,
        adversarial=adversarial,
        workers=workers,
        limit_questions=limit_questions,
        per_category=per_category,
        judge=judge,
        retrieval_eval=not no_retrieval_eval,
        phrasing=phrasing,
    )
    with _resumable(out):
        result = run_locomo(options, config)
    report = (out / "report.md").read_text(encoding="utf-8")
    typer.echo(report)
    _console.print(
        f"asked {result.asked}, skipped (already done) {result.skipped}, failed {result.failed}; "
        f"retrieval recall scored {result.retrieval_computed}, reused "
        f"{result.retrieval_reused}; outputs in {out}"
    )
    stages = ", ".join(f"{stage} {sec:.1f}" for stage, sec in result.stages.items())
    _console.print(f"seconds by stage: {stages} (report.md: 'Run time by stage')")
    if result.failed:
        _console.print(f"[yellow]{result.failed} questions failed; rerun to retry them[/]")


@eval_app.command("longmemeval")
def eval_longmemeval(
    path: Annotated[
        Path, typer.Argument(help="LongMemEval-format JSON, .json or .json.gz (e.g. longmemeval_s)")
    ],
    questions: Annotated[
        list[str] | None, typer.Option("--questions", "-q", help="question ids (default: all)")
    ] = None,
    types: Annotated[
        list[str] | None, typer.Option("--types", help="question types (default: all)")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="first N questions after the filters")
    ] = None,
    systems: Annotated[
        str,
        typer.Option(
            "--systems",
            help="comma-separated retrieval systems",
            show_default=", ".join(LME_SYSTEMS),
        ),
    ] = ",".join(LME_SYSTEMS),
    llm: LlmOpt = None,
    embedder: EmbedderOpt = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="judge model spec (e.g. openai:gpt-4.1-mini)")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="questions in parallel")] = 4,
    qa_k: Annotated[
        int, typer.Option("--qa-k", min=1, help="units a flat baseline shows its answerer")
    ] = 10,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="run folder (default runs/longmemeval-<time>)"),
    ] = None,
) -> None:
    """Ingest each LongMemEval question's history as its own user, score retrieval with the
    benchmark's metrics beside its flat baselines, and (with --llm and --judge) QA accuracy.

    Resumable: rerun with the same --out to finish an interrupted run."""
    from hymem.evaluation.longmemeval.runner import LmeOptions, run_longmemeval

    out = out or _default_out("longmemeval")
    options = LmeOptions(
        dataset=path,
        out=out,
        questions=_split(questions),
        types=_split(types),
        limit=limit,
        systems=_split([systems]),
        workers=workers,
        judge=judge,
        qa_k=qa_k,
    )
    with _resumable(out):
        result = run_longmemeval(options, _config(llm, embedder))
    typer.echo((out / "report.md").read_text(encoding="utf-8"))
    _console.print(
        f"ingested {len(result.ingested)} question(s), ranked {result.ranked} (question, system) "
        f"pairs, asked {result.asked} (already done {result.already_asked}); outputs in {out}"
    )
    if result.ingest_failed or result.failed:
        _console.print(
            f"[yellow]{len(result.ingest_failed)} question(s) not ingested and {result.failed} "
            "answer(s) failed; rerun with the same --out to retry them[/]"
        )


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
    """Write one self-contained HTML page (no network needed to view it); with --traces, a
    memory-health panel of that memory (`hymem audit`) and its recent asks, each with the
    `hymem replay` command that shows what it read then beside today's answer."""
    from hymem.evaluation.dashboard import load_store, write_dashboard

    trace_rows, health = load_store(traces) if traces is not None else ([], None)
    where = str(traces) if traces is not None else None
    write_dashboard(out, traces=trace_rows, runs=runs or [], health=health, store=where)
    _console.print(f"dashboard written to {out}")
