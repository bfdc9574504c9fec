"""`hymem eval locomo`: ingest each conversation turn by turn, ask its questions with every
selected system, score, measure retrieval recall, and write the run's outputs. Resumable at
three points: a conversation whose ingestion finished (its `ingest/<id>.json` exists) is not
fed again, a question already in predictions.jsonl is not asked again, and a question whose
retrieval recall is in retrieval_questions.jsonl under the current configuration and store
state is not searched again (`retrieval_cache`). An interrupted conversation is fed again
whole and its cost summed over the invocations (`ingest_tally`), and every invocation rebuilds
the BM25 index before searching (`settle_lexical`), so an interrupted-then-resumed run reports
what a clean run reports. Each invocation's stage times go to timing.jsonl and the report
(`timing`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.api.internals import embedder_of
from hymem.backfill.locomo import load_locomo
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError, UserInputError
from hymem.core.logging import get_logger
from hymem.evaluation.lineup import build_systems
from hymem.evaluation.locomo_format import Phrasing, phrased_roles
from hymem.evaluation.locomo_ingest import (
    flush_user,
    ingest_all,
    ingest_conversation,
    settle_lexical,
)
from hymem.evaluation.manifest import build_manifest, check_resumable
from hymem.evaluation.metrics import bleu1, evidence_recall, locomo_f1
from hymem.evaluation.pool import run_bounded
from hymem.evaluation.predictions import (
    AnswerRecord,
    PredictionLog,
    PredictionRecord,
    read_predictions,
)
from hymem.evaluation.questions import eligible_questions, select_conversations
from hymem.evaluation.systems import (
    ALL_SYSTEMS,
    System,
    SystemResult,
    answer_fields,
)
from hymem.evaluation.timing import StageClock, append_timing, read_timing
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.backfill.locomo import LocomoConversation, LocomoQA
    from hymem.embed.embedders import Embedder
    from hymem.llm.roles import Roles

log = get_logger("hymem.evaluation.runner")


class RunOptions(BaseModel):
    dataset: Path
    out: Path
    conversations: list[str] = Field(default_factory=list)  # empty: all
    systems: list[str] = Field(default_factory=lambda: list(ALL_SYSTEMS))
    sleep: bool = False
    adversarial: bool = False
    workers: int = Field(4, ge=1)
    limit_questions: int | None = Field(None, ge=1)  # per conversation
    # per conversation and category: the first N of each, so a small sample spans them all
    per_category: int | None = Field(None, ge=1)
    judge: str | None = None  # model spec of the judge, or None
    # How the extractive backend words relative dates: LoCoMo's gold wording ("the Friday
    # before 15 July 2023", see locomo_format) or the core's general one ("14 July 2023").
    phrasing: Phrasing = "locomo"
    retrieval_eval: bool = True
    dashboard: bool = True


class RunResult(BaseModel):
    out: Path
    asked: int  # questions answered by this invocation
    skipped: int  # already in predictions.jsonl
    failed: int  # raised a hymem error; not recorded, so a rerun asks them again
    ingested: list[str]  # conversations fed by this invocation
    retrieval_computed: int = 0  # questions whose retrieval recall this invocation scored
    retrieval_reused: int = 0  # ... and those it took from retrieval_questions.jsonl
    stages: dict[str, float] = Field(default_factory=dict)  # seconds per stage (`timing`)
    summary: dict[str, Any]


def score(
    system: str,
    conv: LocomoConversation,
    idx: int,
    qa: LocomoQA,
    res: SystemResult,
    judge: Roles | None,
) -> PredictionRecord:
    gold = str(qa.answer)
    judge_label = None
    judge_correct = None
    if judge is not None:
        verdict = judge.judge(qa.question, gold, res.prediction)
        judge_label = verdict.output.label.strip().upper()
        judge_correct = judge_label == "CORRECT"
    return PredictionRecord(
        system=system,
        conversation=conv.sample_id,
        qa_index=idx,
        category=qa.category,
        question=qa.question,
        gold=gold,
        evidence=list(qa.evidence),
        f1=locomo_f1(res.prediction, gold, qa.category),
        bleu1=bleu1(res.prediction, gold),
        evidence_recall=evidence_recall(qa.evidence, res.retrieved_turn_ids),
        judge_correct=judge_correct,
        judge_label=judge_label,
        **answer_fields(res),
    )


def judge_config(config: MemoryConfig, spec: str) -> MemoryConfig:
    """The run's configuration with the judge's model; ConfigError on a bad spec. A local
    judge gets the local deadline, as the run's own local model does."""
    try:
        return config.updated(llm=spec)
    except ConfigError as exc:
        raise ConfigError(f"invalid --judge {spec!r}: {exc}") from None


def run_locomo(
    options: RunOptions,
    config: MemoryConfig,
    *,
    embedder: Embedder | None = None,
    roles: Roles | None = None,
    judge_roles: Roles | None = None,
    show_progress: bool = True,
) -> RunResult:
    """Runs (or resumes) one evaluation into `options.out`. `embedder`, `roles` and
    `judge_roles` may be injected (tests); otherwise they come from `config` and the judge spec.
    With the extractive backend and `options.phrasing == "locomo"`, the roles built here word
    relative dates as LoCoMo's gold answers do (an evaluation-only choice, recorded in the
    manifest and the report)."""
    from hymem.api.memory import Memory
    from hymem.embed.embedders import resolve_embedder
    from hymem.evaluation.memo_embedder import MemoEmbedder
    from hymem.evaluation.retrieval_eval import retrieval_stage

    clock = StageClock()
    if not options.dataset.is_file():
        raise UserInputError(f"dataset {options.dataset} does not exist")
    systems = build_systems(options.systems)
    convs = select_conversations(load_locomo(options.dataset), options.conversations)
    out = options.out
    (out / "ingest").mkdir(parents=True, exist_ok=True)

    # Every system embeds each question, and the retrieval stage again (6 searches, 2 contexts,
    # the flat ranking): remembering recent texts embeds it once, with the same vectors.
    embedder = MemoEmbedder(embedder or resolve_embedder(config.embedder, config.embed_batch_size))
    own_roles: Roles | None = None
    if roles is None:
        roles = own_roles = phrased_roles(config, embedder, options.phrasing)
    mem = Memory(out / "store", config=config, embedder=embedder, roles=roles)
    own_judge: Roles | None = None
    cache = None
    try:
        manifest = build_manifest(
            config=config,
            embedder_name=embedder_of(mem).name,
            dataset=options.dataset,
            options=options.model_dump(mode="json", exclude={"out", "dataset"}),
            judge=options.judge,
            phrasing=options.phrasing if config.llm.strip() == "extractive" else None,
        )
        manifest_path = out / "manifest.json"
        if manifest_path.exists():
            check_resumable(json.loads(manifest_path.read_text(encoding="utf-8")), manifest)
        manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        if options.judge and judge_roles is None:
            from hymem.llm import build_roles

            judge_roles = own_judge = build_roles(
                judge_config(config, options.judge), embedder_of(mem)
            )
        clock.lap("setup")

        ingested = ingest_all(mem, convs, out, sleep=options.sleep, show_progress=show_progress)
        # Every invocation searches the index a rebuild makes, whatever history built it.
        settle_lexical(mem)
        clock.lap("ingest")
        asked, skipped, failed = _ask_all(
            mem, convs, systems, out / "predictions.jsonl", options, judge_roles, show_progress
        )
        clock.lap("answers")
        if options.retrieval_eval:
            cache = retrieval_stage(
                mem,
                convs,
                manifest,
                out,
                adversarial=options.adversarial,
                limit=options.limit_questions,
                per_category=options.per_category,
                show_progress=show_progress,
            )
        clock.lap("retrieval")
        dump_traces(mem, out)
        clock.lap("traces")
    finally:
        if own_judge is not None:
            own_judge.close()
        mem.close()
        if own_roles is not None:
            own_roles.close()

    work = {
        "ingested": len(ingested),
        "asked": asked,
        "answers_reused": skipped,
        "failed": failed,
        "retrieval_computed": cache.computed if cache else 0,
        "retrieval_reused": cache.reused if cache else 0,
    }
    summary = write_outputs(out, dashboard=options.dashboard, clock=clock, work=work)
    log.info("eval.done", out=str(out), asked=asked, skipped=skipped, failed=failed)
    log.info("eval.stages", out=str(out), **clock.seconds)
    return RunResult(
        out=out,
        asked=asked,
        skipped=skipped,
        failed=failed,
        ingested=ingested,
        retrieval_computed=work["retrieval_computed"],
        retrieval_reused=work["retrieval_reused"],
        stages=clock.seconds,
        summary=summary,
    )


def write_outputs(
    out: Path,
    *,
    dashboard: bool = True,
    clock: StageClock | None = None,
    work: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """summary.json, report.md and dashboard.html from whatever the folder holds now. With the
    invocation's `clock`, the time spent here is its "outputs" stage, and its timing.jsonl line
    (stage seconds and `work` done) is appended before the report is written, so the report
    shows every stage of the invocation that wrote it."""
    from hymem.evaluation.report import build_summary, render_report

    records = read_predictions(out / "predictions.jsonl")
    ingest = [
        json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "ingest").glob("*.json"))
    ]
    manifest = read_json(out / "manifest.json") or {}
    retrieval = read_json(out / "retrieval.json")
    summary = build_summary(
        records, ingest=ingest, manifest=manifest, retrieval=retrieval, timing=read_timing(out)
    )
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if dashboard:
        from hymem.evaluation.dashboard import write_dashboard

        write_dashboard(out / "dashboard.html", runs=[out])
    if clock is not None:
        clock.lap("outputs")
        append_timing(out, clock.row(**(work or {})))
        summary["timing"] = read_timing(out)
        (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    (out / "report.md").write_text(render_report(summary), encoding="utf-8")
    return summary


def dump_traces(
    mem: Memory,
    out: Path,
    model: type[AnswerRecord] = PredictionRecord,
) -> None:
    """traces.jsonl: the store's traces of the questions in predictions.jsonl, so the run
    folder alone carries the per-round detail the dashboard draws."""
    wanted = {r.trace_id for r in read_predictions(out / "predictions.jsonl", model) if r.trace_id}
    rows = [t for t in mem.traces() if t.trace_id in wanted]
    text = "".join(t.model_dump_json() + "\n" for t in rows)
    (out / "traces.jsonl").write_text(text, encoding="utf-8")


def read_json(path: Path) -> Any:
    """A JSON file's content, or None when the file is absent."""
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _ask_all(
    mem: Memory,
    convs: list[LocomoConversation],
    systems: list[System],
    path: Path,
    options: RunOptions,
    judge: Roles | None,
    show_progress: bool,
) -> tuple[int, int, int]:
    plog: PredictionLog[PredictionRecord] = PredictionLog(path)
    jobs: list[tuple[System, LocomoConversation, int, LocomoQA]] = []
    skipped = 0
    for system in systems:
        for conv in convs:
            for idx, qa in eligible_questions(
                conv,
                adversarial=options.adversarial,
                limit=options.limit_questions,
                per_category=options.per_category,
            ):
                if (system.name, conv.sample_id, idx) in plog.done:
                    skipped += 1
                else:
                    jobs.append((system, conv, idx, qa))

    def one(job: tuple[System, LocomoConversation, int, LocomoQA]) -> None:
        system, conv, idx, qa = job
        res = system.answer(mem, conv, qa, conv.sample_id)
        plog.append(score(system.name, conv, idx, qa, res, judge))

    asked, failed = run_bounded(
        jobs,
        one,
        total=len(jobs),
        workers=options.workers,
        describe=lambda j: {"system": j[0].name, "conversation": j[1].sample_id, "qa_index": j[2]},
        show_progress=show_progress,
    )
    return asked, skipped, failed


__all__ = [
    "RunOptions",
    "RunResult",
    "dump_traces",
    "eligible_questions",
    "flush_user",
    "ingest_conversation",
    "read_json",
    "run_locomo",
    "score",
    "select_conversations",
    "write_outputs",
]
