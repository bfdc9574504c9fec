"""`hymem eval longmemeval`: per question, ingest its history as its own user, rank it with every
selected retrieval system and score the rankings; then, with a model, answer and judge; then
write the run's outputs.

Resumable at three points: a question whose `ingest/<id>.json` exists is not fed again, a
(question, system) already in retrieval.jsonl is not ranked again, and a (system, question)
already in predictions.jsonl is not asked again. Abstention questions are never scored for
retrieval; without a model they are not even ingested.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.api.internals import embedder_of, roles_of
from hymem.core.config import MemoryConfig
from hymem.core.errors import HymemError, UserInputError
from hymem.core.logging import get_logger
from hymem.evaluation.ingest_tally import IngestTally, partial_path
from hymem.evaluation.longmemeval.data import (
    LmeDataset,
    LmeQuestion,
    load_longmemeval,
    log_skips,
    selected_skips,
)
from hymem.evaluation.longmemeval.ingest import ingest_question
from hymem.evaluation.longmemeval.judge import (
    check_judge_spec,
    judge_answer,
    judge_prompt_versions,
)
from hymem.evaluation.longmemeval.matched import rank_question, stored_budgets
from hymem.evaluation.longmemeval.records import LmePrediction, RetrievalRecord
from hymem.evaluation.longmemeval.systems import (
    HYMEM_QA,
    MAX_SEARCH_K,
    RETRIEVAL_SYSTEMS,
    answer_flat,
    ask_hymem,
    check_systems,
    qa_systems,
)
from hymem.evaluation.manifest import build_manifest, check_resumable
from hymem.evaluation.pool import run_bounded
from hymem.evaluation.predictions import PredictionLog, read_predictions
from hymem.evaluation.progress import make_progress
from hymem.evaluation.runner import dump_traces, judge_config, read_json
from hymem.evaluation.systems import SystemResult, answer_fields
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.embed.embedders import Embedder
    from hymem.llm.roles import Roles

log = get_logger("hymem.evaluation.longmemeval.runner")

BENCHMARK = "longmemeval"


class LmeOptions(BaseModel):
    dataset: Path
    out: Path
    questions: list[str] = Field(default_factory=list)  # ids; empty: all
    types: list[str] = Field(default_factory=list)  # question types; empty: all
    limit: int | None = Field(None, ge=1)  # first N after the filters above
    systems: list[str] = Field(default_factory=lambda: list(RETRIEVAL_SYSTEMS))
    workers: int = Field(4, ge=1)
    judge: str | None = None
    qa_k: int = Field(10, ge=1)  # units a flat baseline shows its answerer
    dashboard: bool = True


class LmeRunResult(BaseModel):
    out: Path
    ingested: list[str]  # questions fed by this invocation
    ingest_failed: list[str]  # not finished (a hymem error); a rerun retries them
    ranked: int  # retrieval rows written by this invocation
    asked: int
    already_asked: int
    failed: int
    qa: bool  # whether QA ran (it needs a model)
    summary: dict[str, Any]


def select_questions(
    questions: Sequence[LmeQuestion], ids: Sequence[str], types: Sequence[str], limit: int | None
) -> list[LmeQuestion]:
    """Questions by id and type, in file order, then the first `limit`; UserInputError names
    ids or types the file does not have."""
    by_id = {q.question_id: q for q in questions}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise UserInputError(f"question(s) {missing} not in the dataset (or skipped as malformed)")
    known = sorted({q.question_type for q in questions})
    unknown = [t for t in types if t not in known]
    if unknown:
        raise UserInputError(f"question type(s) {unknown} not in the dataset; it has {known}")
    wanted = set(ids)
    chosen = [
        q
        for q in questions
        if (not ids or q.question_id in wanted) and (not types or q.question_type in types)
    ]
    return chosen[:limit] if limit is not None else chosen


def run_longmemeval(
    options: LmeOptions,
    config: MemoryConfig,
    *,
    embedder: Embedder | None = None,
    roles: Roles | None = None,
    judge_roles: Roles | None = None,
    show_progress: bool = True,
) -> LmeRunResult:
    """Runs (or resumes) one evaluation into `options.out`. `embedder`, `roles` and
    `judge_roles` may be injected (tests); otherwise they come from `config` and `--judge`."""
    from hymem.api.memory import Memory
    from hymem.embed.embedders import resolve_embedder
    from hymem.evaluation.memo_embedder import MemoEmbedder

    started = time.perf_counter()
    systems = check_systems(options.systems)
    check_judge_spec(options.judge)
    dataset = load_longmemeval(options.dataset)
    questions = select_questions(dataset.questions, options.questions, options.types, options.limit)
    out = options.out
    (out / "ingest").mkdir(parents=True, exist_ok=True)
    _write_skipped(out, dataset, questions)
    _write_selection(out, questions)
    if config.max_k < MAX_SEARCH_K:  # hymem's rankings go as deep as the haystack needs
        config = config.updated(max_k=MAX_SEARCH_K)
    # The flat dense baseline embeds the same user turns the write path just embedded.
    memo = MemoEmbedder(
        embedder or resolve_embedder(config.embedder, batch_size=config.embed_batch_size)
    )
    mem = Memory(out / "store", config=config, embedder=memo, roles=roles)
    try:
        _write_manifest(mem, config, options)
        result = _evaluate(mem, questions, systems, options, judge_roles, show_progress)
    finally:
        mem.close()
    counts = {"ingested": len(result.ingested), "ingest_failed": len(result.ingest_failed)}
    _append_timing(out, started, **counts, ranked=result.ranked, asked=result.asked)
    result.summary = write_outputs(out, dashboard=options.dashboard)
    log.info("longmemeval.done", out=str(out), **counts, ranked=result.ranked, asked=result.asked)
    return result


def _evaluate(
    mem: Memory,
    questions: list[LmeQuestion],
    systems: list[str],
    options: LmeOptions,
    judge_roles: Roles | None,
    show_progress: bool,
) -> LmeRunResult:
    """Ingest and rank every question, then (with a model) answer and judge."""
    qa = roles_of(mem).label != "extractive"
    own_judge: Roles | None = None
    if qa and options.judge and judge_roles is None:
        from hymem.llm import build_roles

        judge_roles = own_judge = build_roles(
            judge_config(mem.config, options.judge), embedder_of(mem)
        )
    out = options.out
    try:
        ingested, failed_ingest, ranked = _prepare(mem, questions, systems, out, qa, show_progress)
        asked = already = failed = 0
        if qa:
            ready = [q for q in questions if q.question_id not in failed_ingest]
            judge = judge_roles if options.judge else None
            asked, already, failed = _ask_all(
                mem, ready, systems, out, options, judge, show_progress
            )
            dump_traces(mem, out, LmePrediction)
        elif options.judge:
            log.warning("longmemeval.judge_unused", reason="QA needs a model (--llm)")
    finally:
        if own_judge is not None:
            own_judge.close()
    return LmeRunResult(
        out=out,
        ingested=ingested,
        ingest_failed=failed_ingest,
        ranked=ranked,
        asked=asked,
        already_asked=already,
        failed=failed,
        qa=qa,
        summary={},
    )


def _write_manifest(mem: Memory, config: MemoryConfig, options: LmeOptions) -> None:
    manifest = build_manifest(
        config=config,
        embedder_name=embedder_of(mem).name,
        dataset=options.dataset,
        options=options.model_dump(mode="json", exclude={"out", "dataset"}),
        judge=options.judge,
        phrasing="general" if config.llm == "extractive" else None,  # the core's wording
    )
    manifest["benchmark"] = BENCHMARK
    manifest["prompt_versions"].update(judge_prompt_versions())
    path = options.out / "manifest.json"
    if path.exists():
        check_resumable(json.loads(path.read_text(encoding="utf-8")), manifest)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _write_skipped(out: Path, dataset: LmeDataset, questions: list[LmeQuestion]) -> None:
    """skipped.json, for the report: every question the loader left out of the file, and the
    sessions and turns it left out of the selected questions. Exactly these are warned about,
    so the log and the report's "Skipped" section tell the same story (a `--limit 5` run is not
    warned about a damaged session of question 70)."""
    skips = selected_skips(dataset, (q.question_id for q in questions))
    log_skips(skips)
    rows = [s.model_dump() for s in skips]
    (out / "skipped.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")


def _write_selection(out: Path, questions: list[LmeQuestion]) -> None:
    """selection.json: every question any invocation into this folder selected."""
    path = out / "selection.json"
    rows = {r["question_id"]: r for r in read_json(path) or []}
    for q in questions:
        rows[q.question_id] = {
            "question_id": q.question_id,
            "question_type": q.question_type,
            "abstention": q.abstention,
        }
    path.write_text(json.dumps(list(rows.values()), indent=2), encoding="utf-8")


def _prepare(
    mem: Memory,
    questions: list[LmeQuestion],
    systems: list[str],
    out: Path,
    qa: bool,
    show_progress: bool,
) -> tuple[list[str], list[str], int]:
    """Ingest (where needed) and rank every question; (ingested, failed, rows written)."""
    rlog: PredictionLog[RetrievalRecord] = PredictionLog(out / "retrieval.jsonl", RetrievalRecord)
    # hymem's context budgets logged by an earlier invocation, for flat rows ranked now.
    budgets = stored_budgets(read_predictions(rlog.path, RetrievalRecord))
    # Abstention questions are not scored for retrieval; they matter only when QA runs.
    used = [q for q in questions if qa or not q.abstention]
    todo = [q for q in used if not (out / "ingest" / f"{q.question_id}.json").exists()]
    todo_ids = {q.question_id for q in todo}
    ingested: list[str] = []
    failed: list[str] = []
    ranked = 0
    with make_progress(show_progress) as progress:
        feed = progress.add_task("ingest turns", total=sum(q.turn_count for q in todo))
        rank = progress.add_task("retrieval", total=len(used))
        for q in used:
            if q.question_id in todo_ids:
                tally = IngestTally(partial_path(out, q.question_id))
                try:
                    cost = ingest_question(
                        mem, q, on_turns=lambda n: progress.advance(feed, n), tally=tally
                    )
                except HymemError as exc:
                    failed.append(q.question_id)
                    log.warning(
                        "longmemeval.ingest_failed", question_id=q.question_id, error=str(exc)
                    )
                    continue
                # Written last: its presence means the question is fully in the store.
                (out / "ingest" / f"{q.question_id}.json").write_text(
                    json.dumps(cost, indent=2), encoding="utf-8"
                )
                tally.finish()
                ingested.append(q.question_id)
            ranked += rank_question(mem, q, systems, rlog, budgets)
            progress.advance(rank)
    return ingested, failed, ranked


def _ask_all(
    mem: Memory,
    questions: list[LmeQuestion],
    systems: list[str],
    out: Path,
    options: LmeOptions,
    judge: Roles | None,
    show_progress: bool,
) -> tuple[int, int, int]:
    plog: PredictionLog[LmePrediction] = PredictionLog(out / "predictions.jsonl", LmePrediction)
    rows = read_predictions(out / "retrieval.jsonl", RetrievalRecord)
    rankings = {(r.question_id, r.system): r for r in rows}
    jobs: list[tuple[str, LmeQuestion]] = []
    already = 0
    for q in questions:
        for system in qa_systems(systems):
            if (system, q.question_id) in plog.done:
                already += 1
            elif system == HYMEM_QA or (q.question_id, system) in rankings:
                jobs.append((system, q))

    def one(job: tuple[str, LmeQuestion]) -> None:
        system, q = job
        if system == HYMEM_QA:
            res = ask_hymem(mem, q)
        else:
            res = answer_flat(mem, q, rankings[(q.question_id, system)], options.qa_k)
        plog.append(_prediction(system, q, res, judge))

    asked, failed = run_bounded(
        jobs,
        one,
        total=len(jobs),
        workers=options.workers,
        describe=lambda j: {"system": j[0], "question_id": j[1].question_id},
        show_progress=show_progress,
    )
    return asked, already, failed


def _prediction(
    system: str, q: LmeQuestion, res: SystemResult, judge: Roles | None
) -> LmePrediction:
    correct: bool | None = None
    label = prompt = None
    if judge is not None:
        correct, label, prompt = judge_answer(judge, q, res.prediction)
    return LmePrediction(
        system=system,
        question_id=q.question_id,
        question_type=q.question_type,
        abstention=q.abstention,
        question=q.question,
        question_date=q.question_date_text,
        gold=q.answer,
        judge_correct=correct,
        judge_label=label,
        judge_prompt=prompt,
        **answer_fields(res),
    )


def _append_timing(out: Path, started: float, **counts: int) -> None:
    """timing.jsonl: one line per invocation, so a resumed run's total wall time adds up."""
    row = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_seconds": round(time.perf_counter() - started, 3),
        **counts,
    }
    with (out / "timing.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def write_outputs(out: Path, *, dashboard: bool = True) -> dict[str, Any]:
    """summary.json, report.md and dashboard.html from whatever the folder holds now."""
    from hymem.evaluation.longmemeval.report import build_summary, render_report

    summary = build_summary(
        retrieval=read_predictions(out / "retrieval.jsonl", RetrievalRecord),
        predictions=read_predictions(out / "predictions.jsonl", LmePrediction),
        ingest=[json.loads(p.read_text(encoding="utf-8")) for p in (out / "ingest").glob("*.json")],
        manifest=read_json(out / "manifest.json") or {},
        skipped=read_json(out / "skipped.json") or [],
        timing=_read_jsonl(out / "timing.jsonl"),
        selection=read_json(out / "selection.json") or [],
    )
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    (out / "report.md").write_text(render_report(summary), encoding="utf-8")
    if not (out / "predictions.jsonl").exists():
        (out / "predictions.jsonl").touch()  # present (empty) when QA did not run
    if dashboard:
        from hymem.evaluation.dashboard import write_dashboard

        write_dashboard(out / "dashboard.html", runs=[out])
    return summary


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


__all__ = ["LmeOptions", "LmeRunResult", "run_longmemeval", "select_questions", "write_outputs"]
