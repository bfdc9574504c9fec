"""summary.json and report.md from scored predictions. Pure: records in, dict/markdown out.

The accuracy tables are shaped like HyMem's Table 1 (Single Hop, Multi Hop, Open Domain,
Temporal, Overall). Runs on the extractive backend say so in the title and on every table, so
they are never read as language-model results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hymem.evaluation.markdown import fmt_num, fmt_pct, md_table
from hymem.evaluation.metrics import (
    CATEGORY_NAMES,
    aggregate,
    mean,
    percentile,
)
from hymem.evaluation.predictions import PredictionRecord
from hymem.evaluation.report_retrieval import COLUMNS, budget_section, recall_at_k_section
from hymem.evaluation.timing import timing_section

EXTRACTIVE_LABEL = "extractive (no LLM)"
SCORE_FIELDS = ("f1", "bleu1", "judge_correct", "evidence_recall")


def backend_label(backend: str) -> str:
    return EXTRACTIVE_LABEL if backend == "extractive" else backend


def spender(extractive: bool) -> str:
    """Who the calls and tokens of a run's cost columns belong to: the extractive backend's
    are counted too (what it read and wrote, in tokens), but no model made them."""
    return "Extractive" if extractive else "Model"


def system_summary(records: Sequence[PredictionRecord]) -> dict[str, Any]:
    rows = [r.model_dump() for r in records]
    groups = aggregate(rows, SCORE_FIELDS)
    scores = {f: {g: groups[g][f] for g in groups} for f in SCORE_FIELDS}
    answered_by_path = [r for r in records if r.path in ("light", "deep")]
    latencies = [r.latency_ms for r in records]
    n = len(records)
    esc_by_cat: dict[str, float | None] = {}
    for cat in sorted({r.category for r in answered_by_path}):
        esc_by_cat[CATEGORY_NAMES.get(cat, str(cat))] = mean(
            float(r.escalated) for r in answered_by_path if r.category == cat
        )
    return {
        "n": n,
        "by_category_n": {g: groups[g]["n"] for g in groups},
        "f1": scores["f1"],
        "bleu1": scores["bleu1"],
        "judge": scores["judge_correct"]
        if any(r.judge_correct is not None for r in records)
        else None,
        "evidence_recall": scores["evidence_recall"],
        "avg_context_tokens": mean(r.context_tokens for r in records),
        "avg_tokens": mean(r.tokens for r in records),
        "escalation_rate": mean(float(r.escalated) for r in answered_by_path),
        "escalation_by_category": esc_by_cat,
        "light_calls_per_q": mean(r.light_calls for r in records),
        "deep_calls_per_q": mean(r.deep_calls for r in records),
        "reflect_calls_per_q": mean(r.reflect_calls for r in records),
        "calls_per_q": mean(r.calls for r in records),
        "light_tokens_per_q": mean(r.light_tokens for r in records),
        "deep_tokens_per_q": mean(r.deep_tokens for r in records),
        "latency_p50_ms": percentile(latencies, 50),
        "latency_p95_ms": percentile(latencies, 95),
        "fallback_rate": mean(float(bool(r.fallbacks)) for r in records),
        "backends": sorted({r.backend for r in records if r.backend}),
    }


def build_summary(
    records: Sequence[PredictionRecord],
    *,
    ingest: Sequence[dict[str, Any]],
    manifest: dict[str, Any],
    retrieval: dict[str, Any] | None,
    timing: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    by_system: dict[str, list[PredictionRecord]] = {}
    for r in records:
        by_system.setdefault(r.system, []).append(r)
    backend = str(manifest.get("backend", ""))
    construction = {
        "per_conversation": [
            {k: v for k, v in c.items() if k not in ("usage", "sleep")} for c in ingest
        ],
        "mean": {
            f: mean(c.get(f) for c in ingest) for f in ("calls", "tokens", "seconds", "turns")
        },
    }
    return {
        "backend": backend,
        "label": backend_label(backend),
        "extractive": backend == "extractive",
        "embedder": manifest.get("embedder"),
        "judge": manifest.get("judge"),
        "phrasing": manifest.get("phrasing"),
        "questions": len(records),
        "systems": {name: system_summary(recs) for name, recs in by_system.items()},
        "construction": construction,
        # The per-question budget rows stay in retrieval.json.
        "retrieval": {k: v for k, v in retrieval.items() if k != "budget_questions"}
        if retrieval
        else None,
        "timing": list(timing),  # one row per invocation (`timing`)
    }


def phrasing_note(phrasing: str | None) -> list[str]:
    """Says how the extractive backend worded relative dates, so a score helped by matching
    LoCoMo's gold wording is never read as hymem's default behaviour."""
    if phrasing == "locomo":
        return [
            "**Dates worded as LoCoMo's gold answers word them** ('the Friday before 15 July "
            "2023'), an evaluation-only option (`--phrasing locomo`); hymem's own wording "
            "('14 July 2023') is measured with `--phrasing general`.",
            "",
        ]
    if phrasing == "general":
        return [
            "**Dates in hymem's own wording** ('14 July 2023' for 'last Friday', "
            "`--phrasing general`), not LoCoMo's gold wording.",
            "",
        ]
    return []


def render_report(summary: dict[str, Any]) -> str:
    label = summary["label"]
    systems: dict[str, Any] = summary["systems"]
    lines = [f"# LoCoMo evaluation — {label}", ""]
    if summary["extractive"]:
        lines += [
            f"**Backend: {EXTRACTIVE_LABEL}.** Answers come from deterministic sentence selection "
            "and extraction, not from a language model; do not compare these numbers with "
            "published LLM results.",
            "",
        ]
    lines += phrasing_note(summary.get("phrasing"))
    lines += [
        f"Embedder: `{summary.get('embedder')}`. Questions scored: {summary['questions']}. "
        "Scores in %, LoCoMo-style normalisation (bag-of-tokens F1, BLEU-1 with brevity penalty).",
        "",
    ]
    metric_tables = [("F1", "f1"), ("BLEU-1", "bleu1")]
    if any(s.get("judge") for s in systems.values()):
        metric_tables.append((f"LLM-judge accuracy (judge: {summary.get('judge')})", "judge"))
    for title, key in metric_tables:
        lines += [f"## {title} ({label})", ""]
        rows = []
        for name, s in systems.items():
            vals = s.get(key) or {}
            rows.append(
                [name, fmt_num(s["avg_context_tokens"], 0)]
                + [fmt_pct(vals.get(col)) for col, _ in COLUMNS]
                + [str(s["n"])]
            )
        lines += md_table(["System", "Avg context tokens", *[t for _, t in COLUMNS], "n"], rows)
        lines.append("")
    lines += _cost_section(summary)
    retrieval = summary.get("retrieval")
    if retrieval:
        lines += recall_at_k_section(retrieval)
        lines += budget_section(retrieval)
    lines += _construction_section(summary)
    lines += timing_section(summary.get("timing") or [])
    return "\n".join(lines)


def _cost_section(summary: dict[str, Any]) -> list[str]:
    """Calls, tokens, latency and evidence recall per question, each system on a row."""
    lines = [f"## Cost and behaviour per question ({summary['label']})", ""]
    rows = [
        [
            name,
            fmt_pct(s["escalation_rate"]),
            fmt_num(s["light_calls_per_q"], 2),
            fmt_num(s["deep_calls_per_q"], 2),
            fmt_num(s["reflect_calls_per_q"], 2),
            fmt_num(s["avg_tokens"], 0),
            fmt_num(s["latency_p50_ms"]),
            fmt_num(s["latency_p95_ms"]),
            fmt_num(s["avg_context_tokens"], 0),
            fmt_pct((s["evidence_recall"] or {}).get("overall")),
        ]
        for name, s in summary["systems"].items()
    ]
    lines += md_table(
        [
            "System",
            "Escalation rate",
            "Light calls/q",
            "Deep calls/q",
            "Reflect calls/q",
            f"{spender(summary['extractive'])} tokens/q",
            "Latency p50 ms",
            "Latency p95 ms",
            "Context tokens",
            "Evidence recall",
        ],
        rows,
    )
    lines += [
        "",
        "Evidence recall: share of each question's gold `evidence` turns covered by the turns "
        "behind what the system retrieved (hymem: each summary's own source turns and each "
        "segment's turns; naive RAG: its k turns; full-context: every turn).",
        "",
    ]
    return lines


def _construction_section(summary: dict[str, Any]) -> list[str]:
    """What building each conversation's memory cost, and the mean."""
    cons = summary["construction"]
    if not cons["per_conversation"]:
        return []
    lines = [f"## Construction cost ({summary['label']})", ""]
    rows = [
        [
            c["conversation"],
            str(c.get("turns", "")),
            str(c.get("segments", "")),
            str(c.get("summaries", "")),
            str(c.get("calls", "")),
            str(c.get("tokens", "")),
            fmt_num(c.get("seconds")),
        ]
        for c in cons["per_conversation"]
    ]
    m = cons["mean"]
    rows.append(
        [
            "**mean**",
            fmt_num(m["turns"], 0),
            "",
            "",
            fmt_num(m["calls"], 1),
            fmt_num(m["tokens"], 0),
            fmt_num(m["seconds"]),
        ]
    )
    lines += md_table(
        [
            "Conversation",
            "Turns",
            "Segments",
            "Summaries",
            f"{spender(summary['extractive'])} calls",
            f"{spender(summary['extractive'])} tokens",
            "Seconds",
        ],
        rows,
    )
    lines.append("")
    lines += resumed_note([c["conversation"] for c in cons["per_conversation"] if resumed(c)])
    return lines


def resumed(cost: dict[str, Any]) -> bool:
    """Whether an ingest record sums more than one invocation's feed (`ingest_tally`)."""
    return int(cost.get("parts", 1)) > 1


def resumed_note(units: Sequence[str]) -> list[str]:
    """Says which units' ingestion was interrupted and resumed, and what that does to their
    cost row, so a resumed run is never mistaken for a clean one nor its counts for a part."""
    if not units:
        return []
    return [
        f"Resumed after an interruption: {', '.join(units)}. Counts, calls and tokens are "
        "summed over the invocations that fed them (what an uninterrupted run counts); "
        "seconds add up every invocation's, re-feeding the stored turns included.",
        "",
    ]
