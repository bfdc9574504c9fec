"""The dashboard's charts. Each builder returns a figure that has data to draw, or the reason it
has none (a string), so the page shows only charts with data and says why the others are
absent: an extractive LongMemEval run answers nothing (QA needs a model), an extractive backend
spends no model tokens, a run without traces has no per-round detail.

Numbers come from `dashboard_data` (pure); this module only arranges them into plotly figures,
each source in the colour, dash and label `dashboard_style.Styles` gives it for the whole page.
The retrieval chart, faceted by memory level, is in `dashboard_retrieval`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeAlias

import plotly.graph_objects as go
from hymem.evaluation.dashboard_data import (
    Event,
    accuracy_by_path,
    escalation_by,
    escalation_by_order,
    escalation_by_round,
    escalation_rate,
    with_path,
)
from hymem.evaluation.dashboard_notes import CHART_IDS, CHART_TITLES
from hymem.evaluation.dashboard_retrieval import retrieval
from hymem.evaluation.dashboard_style import Styles, same_as, series_keys, wrap_label

Sources = Mapping[str, list[Event]]
Runs = Sequence[tuple[str, dict[str, Any]]]
Chart: TypeAlias = "go.Figure | str"  # a figure with data, or why there is none


def _fig(ytitle: str = "", yrange: list[float] | None = None, height: int = 380) -> go.Figure:
    """A chart's frame. No plotly title (the page puts it in a heading above the chart, where
    the mode bar cannot cover it), and tick labels never rotated: labels are kept short
    (`Styles` labels, `wrap_label`) or put on a horizontal bar's axis instead."""
    fig = go.Figure()
    fig.update_layout(
        template="plotly_white",
        height=height,
        width=620,
        margin={"l": 60, "r": 20, "t": 30, "b": 60},
        yaxis_title=ytitle,
        barmode="group",
        boxmode="group",
        showlegend=True,
        legend={"orientation": "h", "y": -0.2, "yanchor": "top"},
    )
    fig.update_xaxes(tickangle=0)
    if yrange:
        fig.update_yaxes(range=yrange)
    return fig


def _hbar_fig(xtitle: str, rows: int, xrange: list[float] | None = None) -> go.Figure:
    """A frame for one horizontal bar or box per source: the source names sit unrotated on the
    y axis, first source on top, and the height grows with the rows instead of the labels
    crowding a fixed width."""
    fig = _fig(height=110 + 34 * max(rows, 2))
    fig.update_layout(showlegend=False, barmode="relative", boxmode="overlay", margin={"b": 50})
    fig.update_xaxes(title=xtitle, range=xrange)
    fig.update_yaxes(autorange="reversed", automargin=True, type="category")
    return fig


def has_data(fig: go.Figure) -> bool:
    """Whether some trace has a value to draw (a bar, a point or a box sample); a horizontal
    trace's values are its x (its y only names it)."""
    for trace in fig.data:
        horizontal = getattr(trace, "orientation", None) == "h"
        values = trace.x if horizontal or trace.y is None else trace.y
        if values is not None and any(v is not None for v in values):
            return True
    return False


def _no_answers(runs: Runs) -> str:
    """Why the sources hold no answer at all, as precisely as the run summaries tell."""
    lme_retrieval_only = [
        name for name, s in runs if s.get("benchmark") == "longmemeval" and not s.get("qa")
    ]
    if lme_retrieval_only:
        return (
            f"no answers were recorded: {', '.join(lme_retrieval_only)} scored retrieval only "
            "(LongMemEval QA needs a model: rerun with --llm and --judge)"
        )
    return "no answers were recorded in these sources"


def _no_path(sources: Sources, runs: Runs) -> str | None:
    """Why escalation cannot be drawn, or None when some system has a light/deep path."""
    if not any(sources.values()):
        return _no_answers(runs)
    if not any(with_path(evs) for evs in sources.values()):
        return "no system with a light/deep path (hymem or its ablations) answered"
    return None


def escalation_overall(sources: Sources, runs: Runs, styles: Styles) -> Chart:
    if why := _no_path(sources, runs):
        return why
    pathed = [n for n, evs in sources.items() if with_path(evs)]
    f = _hbar_fig("share escalated", len(pathed), [0, 1])
    for n in pathed:
        st = styles[n]
        f.add_bar(
            y=[st.label],
            x=[escalation_rate(sources[n])],
            orientation="h",
            name=st.label,
            legendgroup=n,
            marker_color=st.colour,
            hovertemplate="%{y}: %{x:.1%}<extra></extra>",
        )
    return f


def escalation_grouped(chart: str, sources: Sources, runs: Runs, styles: Styles) -> Chart:
    """By category, or by reflection round (which needs the answers' traces)."""
    if why := _no_path(sources, runs):
        return why
    f = _fig("share escalated", [0, 1])
    for n, evs in sources.items():
        groups = (
            escalation_by(evs, "category")
            if chart == "chart-escalation-category"
            else escalation_by_round(evs)
        )
        if groups:
            st = styles[n]
            f.add_bar(
                x=[wrap_label(g) for g in groups],
                y=[v[0] for v in groups.values()],
                name=st.label,
                legendgroup=n,
                marker_color=st.colour,
                customdata=[v[1] for v in groups.values()],
                hovertemplate="%{x}: %{y:.1%} of %{customdata}<extra>" + st.label + "</extra>",
            )
    if chart == "chart-escalation-iteration":
        f.update_xaxes(title="reflection round")
    if has_data(f):
        return f
    if chart == "chart-escalation-category":
        return "no answer on a light/deep path carries a question category"
    return "no per-round detail: the answers' traces (traces.jsonl) hold no reflection rounds"


def escalation_order(sources: Sources, runs: Runs, styles: Styles) -> Chart:
    """One line per source, each with its own dash and marker, and a legend that names any
    source whose line is the same as an earlier one's (hymem and no-reflection often are)."""
    if why := _no_path(sources, runs):
        return why
    f = _fig("share escalated", [0, 1])
    series = {n: escalation_by_order(evs) for n, evs in sources.items()}
    series = {n: pts for n, pts in series.items() if pts}
    twins = same_as({n: ([p[1] for p in pts], [p[2] for p in pts]) for n, pts in series.items()})
    for n, pts in series.items():
        st = styles[n]
        name = st.label + (f" (same values as {styles.label(twins[n])})" if n in twins else "")
        f.add_scatter(
            x=[p[1] for p in pts],
            y=[p[2] for p in pts],
            customdata=[[p[0], p[3]] for p in pts],
            hovertemplate="questions %{customdata[0]}-%{x}: %{y:.1%} of %{customdata[1]}"
            "<extra>" + name + "</extra>",
            mode="lines+markers",
            name=name,
            legendgroup=n,
            line={"color": st.colour, "dash": st.dash},
            marker={"color": st.colour, "symbol": st.symbol, "size": 8},
        )
    f.update_xaxes(title="question # (dataset order; store traces: order of arrival)")
    return f


def per_path_boxes(chart: str, attr: str, sources: Sources, runs: Runs, styles: Styles) -> Chart:
    """One horizontal box per (source, path) of an Event attribute ("tokens", "latency_ms"),
    in the source's colour."""
    if not any(sources.values()):
        return _no_answers(runs)
    if attr == "tokens" and not any(e.tokens for evs in sources.values() for e in evs):
        return (
            "no model tokens: every answer came from the extractive backend, which calls no model"
        )
    boxes: list[tuple[str, str, list[float]]] = []
    for n, evs in sources.items():
        for path in ("light", "deep", "none"):
            vals = [float(getattr(e, attr)) for e in evs if e.path == path]
            if vals:
                boxes.append((n, path, vals))
    f = _hbar_fig("tokens per question" if attr == "tokens" else "ms per question", len(boxes))
    for n, path, vals in boxes:
        st = styles[n]
        f.add_box(
            x=vals,
            name=f"{st.label} · {path}",
            orientation="h",
            legendgroup=n,
            marker_color=st.colour,
            boxpoints=False,
        )
    return f


def accuracy_path(sources: Sources, runs: Runs, styles: Styles) -> Chart:
    """Mean F1 (LoCoMo) or judge accuracy (LongMemEval) of answers ending on each path."""
    if why := _no_path(sources, runs):
        return why
    pathed = [n for n, evs in sources.items() if with_path(evs)]
    f = _fig("mean F1 / judge accuracy", [0, 1])
    for n in pathed:
        acc = accuracy_by_path(sources[n])
        st = styles[n]
        f.add_bar(
            x=["light path", "deep path"],
            y=[_score(acc.get(path, {})) for path in ("light", "deep")],
            name=st.label,
            legendgroup=n,
            marker_color=st.colour,
        )
    if has_data(f):
        return f
    return "no answer on a light/deep path has an F1 or a judge verdict"


def _score(cell: Mapping[str, Any]) -> float | None:
    f1 = cell.get("f1")
    return f1 if f1 is not None else cell.get("judge")


def _run_scores(summary: Mapping[str, Any]) -> dict[str, Any]:
    """{system: overall F1 (LoCoMo) or judge accuracy (LongMemEval)} of one run."""
    if summary.get("benchmark") == "longmemeval":
        return {s: v.get("accuracy") for s, v in (summary.get("qa") or {}).items()}
    return {
        s: (v.get("f1") or {}).get("overall") for s, v in (summary.get("systems") or {}).items()
    }


def runs_side_by_side(sources: Sources, runs: Runs, styles: Styles) -> Chart:
    """Overall F1 per system (LoCoMo) or judge accuracy per QA system (LongMemEval): one
    horizontal bar per run and system, in that system's colour."""
    bars = [
        (f"{name}/{system}", score, str(summary.get("label", "")))
        for name, summary in runs
        for system, score in _run_scores(summary).items()
        if score is not None
    ]
    f = _hbar_fig("F1 / judge accuracy", len(bars), [0, 1])
    for key, score, label in bars:
        st = styles[key]
        f.add_bar(
            y=[st.label],
            x=[score],
            orientation="h",
            name=st.label,
            legendgroup=key,
            marker_color=st.colour,
            hovertemplate="%{y}: %{x:.3f}<extra>" + label + "</extra>",
        )
    if has_data(f):
        return f
    if not runs:
        return "no evaluation run was given (--runs)"
    if not any(sources.values()):
        return _no_answers(runs)
    return "no run has an answer score per system (F1, or a judge's accuracy)"


Builder = Callable[[Sources, Runs, Styles], Chart]
_BUILDERS: dict[str, Builder] = {
    "chart-escalation-overall": escalation_overall,
    "chart-escalation-category": partial(escalation_grouped, "chart-escalation-category"),
    "chart-escalation-iteration": partial(escalation_grouped, "chart-escalation-iteration"),
    "chart-escalation-order": escalation_order,
    "chart-tokens": partial(per_path_boxes, "chart-tokens", "tokens"),
    "chart-latency": partial(per_path_boxes, "chart-latency", "latency_ms"),
    "chart-accuracy-path": accuracy_path,
    "chart-runs": runs_side_by_side,
    "chart-retrieval": retrieval,
}


def build_charts(sources: Sources, runs: Runs, styles: Styles | None = None) -> dict[str, Chart]:
    """Every chart in page order: its figure when it has data, else why it is absent. `styles`
    (built once for the page, so the key-numbers table can use the same colours) defaults to
    one over these sources and runs."""
    styles = styles or Styles(series_keys(sources, runs))
    out: dict[str, Chart] = {}
    for chart in CHART_IDS:
        built = _BUILDERS[chart](sources, runs, styles)
        out[chart] = built if isinstance(built, str) or has_data(built) else "nothing to draw"
    return out


__all__ = ["CHART_IDS", "CHART_TITLES", "Chart", "build_charts", "has_data"]
