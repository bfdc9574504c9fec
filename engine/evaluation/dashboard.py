"""`hymem dashboard`: one self-contained HTML page (plotly.js inlined, no network at view time)
from store traces and/or evaluation run folders. Numbers come from `dashboard_data`; this
module only loads inputs and draws. Headline numbers are also written as a plain table with
stable ids and data attributes, so a browser test (or a script) can read them back."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from hymem.errors import UserInputError
from hymem.evaluation.dashboard_data import (
    Event,
    accuracy_by_path,
    escalation_by,
    escalation_by_round,
    escalation_over_time,
    escalation_rate,
    event_from_prediction,
    event_from_trace,
    key_numbers,
    with_path,
)
from hymem.evaluation.predictions import AnswerRecord, PredictionRecord, read_predictions
from hymem.logging import get_logger
from hymem.read.trace_record import Trace, traces_from_rows

log = get_logger("hymem.evaluation.dashboard")

CHART_IDS = (
    "chart-escalation-overall",
    "chart-escalation-category",
    "chart-escalation-iteration",
    "chart-escalation-time",
    "chart-tokens",
    "chart-latency",
    "chart-accuracy-path",
    "chart-runs",
    "chart-retrieval",
)
_KEY_METRICS = (
    ("questions", "Questions", "int"),
    ("escalation_rate", "Escalation rate", "pct"),
    ("mean_f1", "Mean F1", "pct"),
    ("light_f1", "Light-path F1", "pct"),
    ("deep_f1", "Deep-path F1", "pct"),
    ("mean_tokens", "Model tokens / question", "num"),
    ("latency_p50_ms", "Latency p50 (ms)", "num"),
    ("latency_p95_ms", "Latency p95 (ms)", "num"),
)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def run_name(run: Path, runs: Sequence[Path]) -> str:
    """A run's folder name, or parent/name when two compared runs share a folder name."""
    clash = sum(1 for r in runs if r.name == run.name) > 1
    return f"{run.parent.name}/{run.name}" if clash else run.name


def load_store_traces(store: Path) -> list[Trace]:
    """Traces of a memory folder, opened read-only with the embedder it was built with (read
    from its meta.json) so that opening never trips the embedder check."""
    from hymem.memory import Memory

    if not store.is_dir():
        raise UserInputError(f"store {store} is not a folder")
    spec: str | None = None
    meta = store / "meta.json"
    if meta.exists():
        name = str(json.loads(meta.read_text(encoding="utf-8")).get("embedder", ""))
        m = re.fullmatch(r"hashing-(\d+)", name)
        spec = f"hashing:{m.group(1)}" if m else (name or None)
    with Memory(store, embedder=spec, read_only=True) as mem:
        return mem.traces()


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
    sources: dict[str, list[Event]] = {}
    for rec in read_predictions(pred, record_model(run)):
        src = f"{name or run.name}/{rec.system}"
        trace = traces.get(rec.trace_id) if rec.trace_id else None
        sources.setdefault(src, []).append(event_from_prediction(rec.model_dump(), src, trace))
    summary_path = run / "summary.json"
    summary = (
        json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else None
    )
    return sources, summary


def record_model(run: Path) -> type[AnswerRecord]:
    """The predictions' row model of a run folder, by the benchmark its manifest names."""
    manifest = run / "manifest.json"
    benchmark = (
        json.loads(manifest.read_text(encoding="utf-8")).get("benchmark")
        if manifest.exists()
        else None
    )
    if benchmark == "longmemeval":
        from hymem.evaluation.longmemeval.records import LmePrediction

        return LmePrediction
    return PredictionRecord


def retrieval_figure(runs: Sequence[tuple[str, dict[str, Any]]]) -> go.Figure:
    """recall_any@k per system, session level solid and turn level dashed, for runs whose
    summary scores retrieval with the LongMemEval metrics."""
    f = _fig("Retrieval: recall_any@k (session solid, turn dashed)", "recall_any", [0, 1])
    for run_name, summary in runs:
        levels = (summary.get("retrieval") or {}).get("levels") or {}
        for level, dash in (("session", "solid"), ("turn", "dash")):
            for system, scores in (levels.get(level) or {}).items():
                overall = scores.get("overall", {})
                ks = sorted(int(k.split("@")[1]) for k in overall if k.startswith("recall_any@"))
                f.add_scatter(
                    x=[str(k) for k in ks],
                    y=[overall[f"recall_any@{k}"] for k in ks],
                    mode="lines+markers",
                    line={"dash": dash},
                    name=f"{run_name}/{system} ({level})",
                )
    f.update_xaxes(title="k", type="category")
    return f


def _fig(title: str, ytitle: str = "", yrange: list[float] | None = None) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=380,
        width=620,
        margin={"l": 60, "r": 20, "t": 50, "b": 80},
        yaxis_title=ytitle,
        barmode="group",
        showlegend=True,
        legend={"orientation": "h", "y": -0.25},
    )
    if yrange:
        fig.update_yaxes(range=yrange)
    return fig


def build_figures(
    sources: dict[str, list[Event]], runs: Sequence[tuple[str, dict[str, Any]]]
) -> dict[str, go.Figure]:
    figs: dict[str, go.Figure] = {}
    names = list(sources)
    # Escalation and per-path accuracy only mean something for systems with a light/deep path.
    pathed = [n for n in names if with_path(sources[n])]
    f = _fig("Escalation rate overall", "share escalated", [0, 1])
    f.add_bar(x=pathed, y=[escalation_rate(sources[n]) for n in pathed], name="escalation rate")
    figs["chart-escalation-overall"] = f
    for chart, title in (
        ("chart-escalation-category", "Escalation rate by question category"),
        ("chart-escalation-iteration", "Escalation rate by reflection round"),
    ):
        f = _fig(title, "share escalated", [0, 1])
        for n in pathed:
            groups = (
                escalation_by(sources[n], "category")
                if chart == "chart-escalation-category"
                else escalation_by_round(sources[n])
            )
            if groups:
                f.add_bar(
                    x=list(groups),
                    y=[v[0] for v in groups.values()],
                    name=n,
                    customdata=[v[1] for v in groups.values()],
                    hovertemplate="%{x}: %{y:.1%} of %{customdata}<extra>" + n + "</extra>",
                )
        figs[chart] = f
    f = _fig("Escalation rate over time (rolling windows)", "share escalated", [0, 1])
    for n in pathed:
        pts = escalation_over_time(sources[n])
        if pts:
            f.add_scatter(
                x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", name=n
            )
    figs["chart-escalation-time"] = f
    for chart, attr, title in (
        ("chart-tokens", "tokens", "Model tokens per question, by path"),
        ("chart-latency", "latency_ms", "Latency per question (ms), by path"),
    ):
        f = _fig(title)
        for n in names:
            for path in ("light", "deep", "none"):
                vals = [getattr(e, attr) for e in sources[n] if e.path == path]
                if vals:
                    f.add_box(y=vals, name=f"{n} · {path}", boxpoints=False)
        # The tick labels name each box; a legend repeating them would crowd the chart.
        f.update_layout(showlegend=False, height=460, margin={"b": 170})
        f.update_xaxes(tickangle=-40)
        figs[chart] = f
    f = _fig("Light-path vs deep-path accuracy (mean F1)", "F1", [0, 1])
    for path in ("light", "deep"):
        ys = [accuracy_by_path(sources[n]).get(path, {}).get("f1") for n in pathed]
        f.add_bar(x=pathed, y=ys, name=f"{path} path")
    figs["chart-accuracy-path"] = f
    f = _fig("Evaluation runs side by side (overall F1)", "F1", [0, 1])
    for run_name, summary in runs:
        systems = summary.get("systems", {})
        f.add_bar(
            x=list(systems),
            y=[(s.get("f1") or {}).get("overall") for s in systems.values()],
            name=f"{run_name} ({summary.get('label', '')})",
        )
    figs["chart-runs"] = f
    figs["chart-retrieval"] = retrieval_figure(runs)
    return figs


def _fmt(value: Any, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "pct":
        return f"{100 * value:.1f}%"
    if kind == "int":
        return str(int(value))
    return f"{value:,.1f}"


def _data_value(value: float | None) -> str:
    return "" if value is None else str(round(float(value), 6))


def key_numbers_table(sources: dict[str, list[Event]]) -> str:
    head = "".join(f"<th>{html.escape(t)}</th>" for _, t, _ in _KEY_METRICS)
    rows = []
    for src, events in sources.items():
        nums = key_numbers(events)
        cells = "".join(
            f'<td id="kn-{slug(src)}-{slug(m)}" data-metric="{m}" '
            f'data-value="{_data_value(nums[m])}">'
            f"{_fmt(nums[m], kind)}</td>"
            for m, _, kind in _KEY_METRICS
        )
        rows.append(f'<tr data-source="{html.escape(src)}"><th>{html.escape(src)}</th>{cells}</tr>')
    return (
        f'<table id="key-numbers"><thead><tr><th>Source</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right}th:first-child{text-align:left}.grid{display:grid;
grid-template-columns:repeat(auto-fill,640px);gap:16px}.note{color:#666}"""


def render_dashboard(*, traces: Sequence[Trace] = (), runs: Sequence[Path] = ()) -> str:
    sources: dict[str, list[Event]] = {}
    if traces:
        sources["traces"] = [event_from_trace(t) for t in traces]
    run_summaries: list[tuple[str, dict[str, Any]]] = []
    labels: list[str] = []
    for run in runs:
        name = run_name(run, runs)
        run_sources, summary = load_run(run, name)
        sources.update(run_sources)
        if summary:
            run_summaries.append((name, summary))
            labels.append(f"{html.escape(name)}: {html.escape(summary.get('label', ''))}")
    if not sources and not run_summaries:
        raise UserInputError("nothing to draw: give --traces STORE and/or --runs DIR")
    figs = build_figures(sources, run_summaries)
    parts = []
    for i, chart_id in enumerate(CHART_IDS):
        parts.append(
            figs[chart_id].to_html(
                full_html=False,
                include_plotlyjs=(i == 0),
                div_id=chart_id,
                config={"displaylogo": False},
            )
        )
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    backend_note = "<br>".join(labels)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>hymem dashboard</title>"
        f"<style>{_CSS}</style></head><body><h1>hymem: escalation and cost</h1>"
        f"<p class='note'>Generated {generated}. Sources: {len(sources)}. {backend_note}</p>"
        f"<h2>Key numbers</h2>{key_numbers_table(sources)}"
        f"<div class='grid'>{''.join(parts)}</div></body></html>"
    )


def write_dashboard(out: Path, *, traces: Sequence[Trace] = (), runs: Sequence[Path] = ()) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_dashboard(traces=traces, runs=runs), encoding="utf-8")
    log.info("dashboard.written", path=str(out), runs=[str(r) for r in runs], traces=len(traces))
    return out
