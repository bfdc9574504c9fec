"""summary.json and report.md of a LongMemEval run. Pure: rows in, dict/markdown out.

Every retrieval table puts hymem's systems first and the flat baselines beside them, over the
same questions; the tokens table says what each system's top-k would cost in a prompt, and the
matched-budget tables compare them at hymem's own per-question cost. Runs on the extractive
backend show the retrieval tables only and say that QA needs a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hymem.evaluation.longmemeval.metrics import KS, LEVELS, METRICS
from hymem.evaluation.longmemeval.records import LmePrediction, RetrievalRecord
from hymem.evaluation.longmemeval.report_matched import matched_section, matched_summary
from hymem.evaluation.longmemeval.systems import RETRIEVAL_SYSTEMS
from hymem.evaluation.markdown import fmt_num, fmt_pct, md_table
from hymem.evaluation.metrics import mean, percentile
from hymem.evaluation.report import (
    EXTRACTIVE_LABEL,
    backend_label,
    resumed,
    resumed_note,
    spender,
)

TYPE_TITLES: dict[str, str] = {
    "single-session-user": "SS-user",
    "single-session-assistant": "SS-assistant",
    "single-session-preference": "SS-preference",
    "multi-session": "Multi-session",
    "knowledge-update": "Knowledge-update",
    "temporal-reasoning": "Temporal",
}
# (metric, k) shown per question type in the report; summary.json has every combination.
BY_TYPE_HEADLINES: tuple[tuple[str, int], ...] = (("recall_any", 5), ("ndcg", 10))


def ordered_types(types: set[str]) -> list[str]:
    return [t for t in TYPE_TITLES if t in types] + sorted(types - set(TYPE_TITLES))


def ordered_systems(names: set[str]) -> list[str]:
    return [s for s in RETRIEVAL_SYSTEMS if s in names] + sorted(names - set(RETRIEVAL_SYSTEMS))


def _means(rows: Sequence[dict[str, float]]) -> dict[str, float | int | None]:
    keys = [f"{m}@{k}" for m in METRICS for k in KS]
    out: dict[str, float | int | None] = {"n": len(rows)}
    out.update({key: mean(r.get(key) for r in rows) for key in keys})
    return out


def retrieval_summary(records: Sequence[RetrievalRecord]) -> dict[str, Any]:
    """{level: {system: {"overall": means, "by_type": {type: means}}}} plus tokens and the
    questions skipped per level (ids), from the scored rows."""
    levels: dict[str, dict[str, Any]] = {}
    for level in LEVELS:
        per_system: dict[str, Any] = {}
        for system in ordered_systems({r.system for r in records}):
            rows = [r for r in records if r.system == system and level in r.metrics]
            if not rows:
                continue
            by_type = {
                t: _means([r.metrics[level] for r in rows if r.question_type == t])
                for t in ordered_types({r.question_type for r in rows})
            }
            per_system[system] = {
                "overall": _means([r.metrics[level] for r in rows]),
                "by_type": by_type,
            }
        levels[level] = per_system
    no_evidence = {
        level: sorted(
            {r.question_id for r in records if r.skipped.get(level, "").startswith("no evidence")}
        )
        for level in LEVELS
    }
    systems = ordered_systems({r.system for r in records})
    return {
        "systems": systems,
        "granularity": {r.system: r.granularity for r in records},
        "levels": levels,
        "context_tokens": {
            s: {
                str(k): mean(r.context_tokens.get(str(k)) for r in records if r.system == s)
                for k in KS
            }
            for s in systems
        },
        "latency_ms": {s: mean(r.latency_ms for r in records if r.system == s) for s in systems},
        "matched": matched_summary(records, ordered_types({r.question_type for r in records})),
        "no_evidence": no_evidence,
        "questions": len({r.question_id for r in records if r.metrics}),
    }


def qa_summary(predictions: Sequence[LmePrediction]) -> dict[str, Any]:
    """Per QA system: answers, judge accuracy overall / per type / on abstention, cost."""
    out: dict[str, Any] = {}
    for system in dict.fromkeys(p.system for p in predictions):
        recs = [p for p in predictions if p.system == system]
        judged = [p for p in recs if p.judge_correct is not None]

        def acc(rows: Sequence[LmePrediction]) -> float | None:
            return mean(float(bool(p.judge_correct)) for p in rows)

        out[system] = {
            "n": len(recs),
            "judged": len(judged),
            "accuracy": acc(judged) if judged else None,
            "by_type": {
                t: acc([p for p in judged if p.question_type == t and not p.abstention])
                for t in ordered_types({p.question_type for p in judged if not p.abstention})
            },
            "abstention": acc([p for p in judged if p.abstention]),
            "avg_context_tokens": mean(p.context_tokens for p in recs),
            "avg_model_tokens": mean(p.tokens for p in recs),
            "escalation_rate": mean(
                float(p.escalated) for p in recs if p.path in ("light", "deep")
            ),
            "latency_p50_ms": percentile([p.latency_ms for p in recs], 50),
            "latency_p95_ms": percentile([p.latency_ms for p in recs], 95),
        }
    return out


def ingestion_summary(ingest: Sequence[dict[str, Any]]) -> dict[str, Any]:
    turns = sum(int(c.get("turns", 0)) for c in ingest)
    seconds = sum(float(c.get("seconds", 0.0)) for c in ingest)
    return {
        "questions": len(ingest),
        "turns": turns,
        "seconds": round(seconds, 3),
        "turns_per_second": round(turns / seconds, 2) if seconds > 0 else None,
        "segments": sum(int(c.get("segments", 0)) for c in ingest),
        "summaries": sum(int(c.get("summaries", 0)) for c in ingest),
        "calls": sum(int(c.get("calls", 0)) for c in ingest),
        "tokens": sum(int(c.get("tokens", 0)) for c in ingest),
        "turns_skipped": sum(int(c.get("turns_skipped", 0)) for c in ingest),
        # questions whose cost sums several invocations' feeds (`ingest_tally`)
        "resumed": sorted(str(c.get("question_id")) for c in ingest if resumed(c)),
    }


def build_summary(
    *,
    retrieval: Sequence[RetrievalRecord],
    predictions: Sequence[LmePrediction],
    ingest: Sequence[dict[str, Any]],
    manifest: dict[str, Any],
    skipped: Sequence[dict[str, Any]],
    timing: Sequence[dict[str, Any]],
    selection: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    backend = str(manifest.get("backend", ""))
    by_kind = {
        k: [s for s in skipped if s.get("kind") == k] for k in ("question", "session", "turn")
    }
    return {
        "benchmark": "longmemeval",
        "backend": backend,
        "label": backend_label(backend),
        "extractive": backend == "extractive",
        "embedder": manifest.get("embedder"),
        "judge": manifest.get("judge"),
        "selected": len(selection),
        "abstention": sum(1 for q in selection if q.get("abstention")),
        "retrieval": retrieval_summary(retrieval),
        "qa": qa_summary(predictions) if predictions else None,
        "ingestion": ingestion_summary(ingest),
        "skipped": {
            "questions": len(by_kind["question"]),
            "sessions": len(by_kind["session"]),
            "turns": len(by_kind["turn"]),
            "details": list(skipped)[:50],
        },
        "wall_seconds": {
            "invocations": len(timing),
            "total": round(sum(float(t.get("wall_seconds", 0.0)) for t in timing), 3),
            "last": timing[-1].get("wall_seconds") if timing else None,
        },
    }


def _cell(v: Any) -> str:
    return fmt_pct(v)


def _system_label(summary: dict[str, Any], system: str) -> str:
    return f"{system} ({summary['retrieval']['granularity'].get(system, '?')})"


def _retrieval_section(summary: dict[str, Any], level: str) -> list[str]:
    per_system: dict[str, Any] = summary["retrieval"]["levels"].get(level, {})
    if not per_system:
        return [f"## Retrieval, {level} level", "", "No question could be scored here.", ""]
    n = max(s["overall"]["n"] for s in per_system.values())
    lines = [f"## Retrieval, {level} level ({n} questions with {level} evidence)", ""]
    names = {"recall_any": "recall_any", "recall_all": "recall_all", "ndcg": "NDCG"}
    for metric in METRICS:
        rows = [
            [
                _system_label(summary, s),
                *[_cell(v["overall"][f"{metric}@{k}"]) for k in KS],
                str(v["overall"]["n"]),
            ]
            for s, v in per_system.items()
        ]
        lines += [f"### {names[metric]}@k, all types", ""]
        lines += [*md_table(["System (unit)", *[f"@{k}" for k in KS], "n"], rows), ""]
    types = ordered_types({t for v in per_system.values() for t in v["by_type"]})
    for metric, k in BY_TYPE_HEADLINES:
        rows = [
            [_system_label(summary, s)]
            + [_cell(v["by_type"].get(t, {}).get(f"{metric}@{k}")) for t in types]
            + [_cell(v["overall"][f"{metric}@{k}"])]
            for s, v in per_system.items()
        ]
        header = ["System (unit)", *[TYPE_TITLES.get(t, t) for t in types], "Overall"]
        lines += [f"### {names[metric]}@{k} by question type", ""]
        lines += [*md_table(header, rows), ""]
    return lines


def _tokens_section(summary: dict[str, Any]) -> list[str]:
    tokens: dict[str, dict[str, Any]] = summary["retrieval"]["context_tokens"]
    if not tokens:
        return []
    rows = [
        [_system_label(summary, s), *[fmt_num(v.get(str(k)), 0) for k in KS]]
        for s, v in tokens.items()
    ]
    return [
        "## Context tokens of each system's top-k (mean per question)",
        "",
        "What the top-k items would put in a prompt: hymem's summaries or segments, the flat "
        "baselines' user turns or sessions' user text (WordPiece tokens).",
        "",
        *md_table(["System (unit)", *[f"top-{k}" for k in KS]], rows),
        "",
    ]


def _qa_section(summary: dict[str, Any]) -> list[str]:
    lines = ["## Question answering", ""]
    qa = summary.get("qa")
    if summary["extractive"]:
        return [
            *lines,
            f"**Backend: {EXTRACTIVE_LABEL}.** QA needs a model: LongMemEval answers are graded "
            "by an LLM judge under per-type rules. Rerun with `--llm openai:MODEL --judge "
            "openai:MODEL` to score QA; the retrieval tables above need no model.",
            "",
        ]
    if not qa:
        return [*lines, "No answers yet.", ""]
    if not summary.get("judge"):
        lines += ["No `--judge` was given: answers are in predictions.jsonl, unscored.", ""]
    types = ordered_types({t for s in qa.values() for t in s["by_type"]})
    rows = [
        [
            name,
            *[_cell(s["by_type"].get(t)) for t in types],
            _cell(s["abstention"]),
            _cell(s["accuracy"]),
            fmt_num(s["avg_context_tokens"], 0),
            str(s["n"]),
        ]
        for name, s in qa.items()
    ]
    header = ["System", *[TYPE_TITLES.get(t, t) for t in types], "Abstention", "Overall"]
    lines += [f"Judge: `{summary.get('judge')}`; accuracy in %.", ""]
    return [*lines, *md_table([*header, "Context tokens", "n"], rows), ""]


def _ingest_section(summary: dict[str, Any]) -> list[str]:
    ing = summary["ingestion"]
    wall = summary["wall_seconds"]
    return [
        "## Ingestion and time",
        "",
        *md_table(
            [
                "Questions",
                "Turns",
                "Seconds",
                "Turns/s",
                "Segments",
                "Summaries",
                f"{spender(summary['extractive'])} calls",
                f"{spender(summary['extractive'])} tokens",
            ],
            [
                [
                    str(ing["questions"]),
                    str(ing["turns"]),
                    fmt_num(ing["seconds"]),
                    fmt_num(ing["turns_per_second"], 1),
                    str(ing["segments"]),
                    str(ing["summaries"]),
                    str(ing["calls"]),
                    str(ing["tokens"]),
                ]
            ],
        ),
        "",
        *resumed_note(ing.get("resumed") or []),
        f"Wall time: {fmt_num(wall['total'])} s over {wall['invocations']} invocation(s) "
        f"(last: {fmt_num(wall['last'])} s).",
        "",
    ]


def _skipped_section(summary: dict[str, Any]) -> list[str]:
    sk = summary["skipped"]
    ret = summary["retrieval"]
    lines = [
        "## Skipped",
        "",
        f"- questions of the file left out by the loader (malformed, bad date): {sk['questions']}",
        f"- sessions left out of selected questions (bad date, repeated verbatim): "
        f"{sk['sessions']}",
        f"- turns of selected questions not ingested or indexed (empty content): {sk['turns']}",
        f"- abstention questions (not scored for retrieval): {summary['abstention']}",
    ]
    for level in LEVELS:
        ids = ret["no_evidence"].get(level, [])
        shown = ", ".join(ids[:10]) + (" ..." if len(ids) > 10 else "")
        lines.append(
            f"- questions without {level}-level evidence: {len(ids)}"
            + (f" ({shown})" if ids else "")
        )
    lines += [
        f"  - {d['kind']} {d['item']} of {d['question_id']}: {d['reason']}"
        for d in sk["details"][:20]
    ]
    return [*lines, ""]


def retrieval_sections(summary: dict[str, Any]) -> list[str]:
    """The report's retrieval tables (per level, context tokens, matched budgets), also shown
    on the dashboard."""
    lines: list[str] = []
    for level in LEVELS:
        lines += _retrieval_section(summary, level)
    lines += _tokens_section(summary)
    lines += matched_section(summary["retrieval"].get("matched") or {}, TYPE_TITLES)
    return lines


def render_report(summary: dict[str, Any]) -> str:
    label = summary["label"]
    lines = [f"# LongMemEval evaluation — {label}", ""]
    ret = summary["retrieval"]
    lines += [
        f"Embedder: `{summary.get('embedder')}`. Questions scored for retrieval: "
        f"{ret['questions']}. Metrics as the benchmark defines them (recall_any, recall_all, "
        "NDCG over the whole haystack; turn rankings scored at session level by the official "
        "conversion); scores in %. Flat baselines index the user's turns only, as in the paper. "
        "hymem-light and hymem-deep rank only what their path reads (its budgeted summaries, the "
        "segments it selected), so their @k figures stop growing past that.",
        "",
    ]
    lines += retrieval_sections(summary)
    lines += _qa_section(summary)
    lines += _ingest_section(summary)
    lines += _skipped_section(summary)
    return "\n".join(lines)


__all__ = [
    "build_summary",
    "ingestion_summary",
    "qa_summary",
    "render_report",
    "retrieval_sections",
    "retrieval_summary",
]
