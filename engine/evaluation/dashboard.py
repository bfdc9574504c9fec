"""`hymem dashboard`: one self-contained HTML page (plotly.js inlined, no network at view time)
from store traces and/or evaluation run folders. Numbers come from `dashboard_data`, charts from
`dashboard_figures` (only those with data are drawn; the page says why the others are absent),
tables from `dashboard_tables` (the key numbers, and each run's retrieval and matched-budget
tables as its report has them), titles, notes and the glossary from `dashboard_notes`, and each
source's colour and label from one `dashboard_style.Styles` for the whole page; this module
loads the inputs and assembles the page."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hymem.core.errors import UserInputError
from hymem.core.logging import get_logger
from hymem.evaluation.dashboard_data import (
    Event,
    event_from_prediction,
    question_positions,
    traces_in_order,
)
from hymem.evaluation.dashboard_figures import build_charts
from hymem.evaluation.dashboard_notes import CHART_IDS, CHART_NOTES, CHART_TITLES, glossary_html
from hymem.evaluation.dashboard_style import Styles, series_keys
from hymem.evaluation.dashboard_tables import asks_table, key_numbers_table, retrieval_tables
from hymem.evaluation.predictions import AnswerRecord, PredictionRecord, read_predictions
from hymem.manage.audit import AuditReport
from hymem.read.trace_record import Trace, traces_from_rows

log = get_logger("hymem.evaluation.dashboard")


def run_name(run: Path, runs: Sequence[Path]) -> str:
    """A run's folder name, or parent/name when two compared runs share a folder name."""
    clash = sum(1 for r in runs if r.name == run.name) > 1
    return f"{run.parent.name}/{run.name}" if clash else run.name


def load_store_traces(store: Path) -> list[Trace]:
    """Traces of a memory folder, opened read-only with the embedder it was built with (read
    from its meta.json) so that opening never trips the embedder check."""
    return load_store(store)[0]


def load_store(store: Path) -> tuple[list[Trace], AuditReport]:
    """A memory folder's traces and the health of its memory (`Memory.audit`), read-only."""
    from hymem.api.memory import Memory

    if not store.is_dir():
        raise UserInputError(f"store {store} is not a folder")
    spec: str | None = None
    meta = store / "meta.json"
    if meta.exists():
        name = str(json.loads(meta.read_text(encoding="utf-8")).get("embedder", ""))
        m = re.fullmatch(r"hashing-(\d+)", name)
        spec = f"hashing:{m.group(1)}" if m else (name or None)
    with Memory(store, embedder=spec, read_only=True) as mem:
        return mem.traces(), mem.audit()


def health_table(report: AuditReport | None) -> str:
    """The memory-health panel: one row per user of the store (`hymem audit`'s numbers)."""
    if report is None or not report.users:
        return ""
    head = (
        "<tr><th>user</th><th>active summaries</th><th>mean support</th><th>unsupported</th>"
        "<th>duplicate clusters</th><th>contradictions</th><th>ended but served</th>"
        "<th>unlinked</th><th>healthy</th></tr>"
    )
    rows = "".join(
        f"<tr><td>{html.escape(u.user_id)}</td><td>{u.summaries}</td>"
        f"<td>{u.mean_support:.2f}</td><td>{u.unsupported}</td>"
        f"<td>{len(u.duplicate_clusters)}</td><td>{len(u.contradictions)}</td>"
        f"<td>{len(u.stale_served)}</td>"
        f"<td>{len(u.unlinked_summaries) + len(u.unlinked_segments)}</td>"
        f"<td>{'yes' if u.healthy else 'no'}</td></tr>"
        for u in report.users
    )
    return f"<h2>Memory health</h2><table id='memory-health'>{head}{rows}</table>"


def load_run(
    run: Path, name: str | None = None
) -> tuple[dict[str, list[Event]], dict[str, Any] | None]:
    """Events per "<run>/<system>" source, and the run's summary.json when present."""
    pred = run / "predictions.jsonl"
    if not pred.exists():
        raise UserInputError(f"{run} is not an evaluation run folder (no predictions.jsonl)")
    traces: dict[str, Trace] = {}
    traces_path = run / "traces.jsonl"
    if traces_path.exists():
        lines = traces_path.read_text(encoding="utf-8").splitlines()
        rows = traces_from_rows(json.loads(line) for line in lines if line.strip())
        traces = {t.trace_id: t for t in rows}
    records = read_predictions(pred, record_model(run))
    order = question_order(run)
    positions = question_positions(order(r) for r in records)
    sources: dict[str, list[Event]] = {}
    for rec in records:
        src = f"{name or run.name}/{rec.system}"
        trace = traces.get(rec.trace_id) if rec.trace_id else None
        event = event_from_prediction(rec.model_dump(), src, trace, positions[order(rec)])
        sources.setdefault(src, []).append(event)
    summary_path = run / "summary.json"
    summary = (
        json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else None
    )
    return sources, summary


def _benchmark(run: Path) -> str | None:
    manifest = run / "manifest.json"
    if not manifest.exists():
        return None
    benchmark: str | None = json.loads(manifest.read_text(encoding="utf-8")).get("benchmark")
    return benchmark


def record_model(run: Path) -> type[AnswerRecord]:
    """The predictions' row model of a run folder, by the benchmark its manifest names."""
    if _benchmark(run) == "longmemeval":
        from hymem.evaluation.longmemeval.records import LmePrediction

        return LmePrediction
    return PredictionRecord


def question_order(run: Path) -> Callable[[Any], tuple[Any, ...]]:
    """A sort key putting a run's records in question order: LoCoMo by conversation, then
    question number; LongMemEval by the question's place in the run's selection (file
    order)."""
    if _benchmark(run) == "longmemeval":
        path = run / "selection.json"
        rows = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
        place = {r["question_id"]: i for i, r in enumerate(rows)}
        return lambda r: (place.get(r.question_id, len(place)), r.question_id)
    return lambda r: (r.conversation, r.qa_index)


_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right}th:first-child{text-align:left}.grid{display:grid;
grid-template-columns:repeat(auto-fill,640px);gap:16px}.note{color:#666}
figure.chart{margin:0}figure.chart h3{font-size:16px;font-weight:600;margin:8px 0 0 8px}
figure.chart figcaption{font-size:13px;margin:0 8px 8px;max-width:600px}
#glossary dl{display:grid;grid-template-columns:190px 1fr;gap:4px 16px;max-width:1280px;
font-size:14px;margin:8px 0}#glossary dt{font-weight:600}#glossary dd{margin:0;color:#444}
.scroll{max-height:26em;overflow-y:auto;display:inline-block}.scroll table{margin:0}
.run-retrieval table{font-size:13px}.run-retrieval td:first-child{text-align:left}
.run-retrieval p{max-width:960px;color:#444}"""

# The mode bar only while the pointer is on a chart (plotly's default, pinned here); it sits in
# the figure's top margin, and the chart titles are headings above the figure, so it covers no
# text. Box and lasso selection select nothing useful here, so they are left out, and the logo.
CHART_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "displayModeBar": "hover",
    "modeBarButtonsToRemove": ["select2d", "lasso2d"],
}


def chart_html(charts: dict[str, Any]) -> tuple[str, str]:
    """The drawn charts (plotly.js inlined once, with the first), each under its title as a
    heading and above a note on how to read it, and the list of the absent ones, charts absent
    for the same reason on one line."""
    drawn: list[str] = []
    absent: dict[str, list[str]] = {}
    for chart_id, chart in charts.items():
        if isinstance(chart, str):
            absent.setdefault(chart, []).append(chart_id)
            continue
        div = chart.to_html(
            full_html=False, include_plotlyjs=not drawn, div_id=chart_id, config=CHART_CONFIG
        )
        drawn.append(
            f"<figure class='chart' data-chart='{chart_id}'>"
            f"<h3>{html.escape(CHART_TITLES[chart_id])}</h3>{div}"
            f"<figcaption class='note'>{html.escape(CHART_NOTES[chart_id])}</figcaption></figure>"
        )
    items = "".join(
        f'<li data-charts="{" ".join(ids)}"><strong>'
        f"{html.escape('; '.join(CHART_TITLES[c] for c in ids))}</strong>: "
        f"{html.escape(reason)}</li>"
        for reason, ids in absent.items()
    )
    note = (
        "<h2>Not drawn</h2><p class='note'>Charts without data are left out, and why:</p>"
        f"<ul id='absent-charts'>{items}</ul>"
        if absent
        else ""
    )
    return "".join(drawn), note


def render_dashboard(
    *,
    traces: Sequence[Trace] = (),
    runs: Sequence[Path] = (),
    health: AuditReport | None = None,
    store: str | None = None,
) -> str:
    """The page; `store` is where `traces` came from, for each ask's replay command."""
    sources: dict[str, list[Event]] = {}
    if traces:
        sources["traces"] = traces_in_order(traces)
    run_summaries: list[tuple[str, dict[str, Any]]] = []
    labels: list[str] = []
    for run in runs:
        name = run_name(run, runs)
        run_sources, summary = load_run(run, name)
        sources.update(run_sources)
        if summary:
            run_summaries.append((name, summary))
            labels.append(f"{html.escape(name)}: {html.escape(summary.get('label', ''))}")
    if not sources and not run_summaries and health is None:
        raise UserInputError("nothing to draw: give --traces STORE and/or --runs DIR")
    styles = Styles(series_keys(sources, run_summaries))
    charts, absent = chart_html(build_charts(sources, run_summaries, styles))
    colours = {k: styles.colour(k) for k in sources}
    numbers = key_numbers_table(sources, colours) or (
        "<p class='note' id='no-key-numbers'>No answers were recorded, so there are no "
        "per-answer numbers (escalation, F1, tokens, latency); see the retrieval tables.</p>"
    )
    tables = retrieval_tables(run_summaries)
    if tables:
        tables = f"<h2>Retrieval and matched budgets (as in report.md)</h2>{tables}"
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    backend_note = "<br>".join(labels)
    # The short panels (memory health, recent asks in a scrolling box) come before the long
    # report tables, which a reader would otherwise have to scroll past to find them.
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>hymem dashboard</title>"
        f"<style>{_CSS}</style></head><body><h1>hymem: escalation and cost</h1>"
        f"<p class='note'>Generated {generated}. Answer sources: {len(sources)}. {backend_note}</p>"
        f"<h2>Key numbers</h2>{numbers}{glossary_html()}"
        f"<div class='grid'>{charts}</div>{absent}{health_table(health)}"
        f"{asks_table(traces, store)}{tables}</body></html>"
    )


def write_dashboard(
    out: Path,
    *,
    traces: Sequence[Trace] = (),
    runs: Sequence[Path] = (),
    health: AuditReport | None = None,
    store: str | None = None,
) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    page = render_dashboard(traces=traces, runs=runs, health=health, store=store)
    out.write_text(page, encoding="utf-8")
    log.info("dashboard.written", path=str(out), runs=[str(r) for r in runs], traces=len(traces))
    return out


__all__ = [
    "CHART_CONFIG",
    "CHART_IDS",
    "health_table",
    "load_run",
    "load_store",
    "load_store_traces",
    "record_model",
    "render_dashboard",
    "run_name",
    "write_dashboard",
]
