"""The dashboard's charts. Each builder returns a figure that has data to draw, or the reason it
has none (a string), so the page shows only charts with data and says why the others are
absent: an extractive LongMemEval run answers nothing (QA needs a model), an extractive backend
spends no model tokens, a run without traces has no per-round detail.

Numbers come from `dashboard_data` (pure); this module only arranges them into plotly figures."""

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

Sources = Mapping[str, list[Event]]
Runs = Sequence[tuple[str, dict[str, Any]]]
Chart: TypeAlias = "go.Figure | str"  # a figure with data, or why there is none

CHART_TITLES: dict[str, str] = {
    "chart-escalation-overall": "Escalation rate overall",
    "chart-escalation-category": "Escalation rate by question category",
    "chart-escalation-iteration": "Escalation rate by reflection round",
    "chart-escalation-order": "Escalation rate by question order (rolling windows)",
    "chart-tokens": "Tokens per question (model or extractive backend), by path",
    "chart-latency": "Latency per question (ms), by path",
    "chart-accuracy-path": "Light-path vs deep-path accuracy",
    "chart-runs": "Evaluation runs side by side (answer scores)",
    "chart-retrieval": "Retrieval: evidence recall@k",
}
CHART_IDS = tuple(CHART_TITLES)


def _fig(chart: str, ytitle: str = "", yrange: list[float] | None = None) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title=CHART_TITLES[chart],
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


def has_data(fig: go.Figure) -> bool:
    """Whether some trace has a value to draw (a bar, a point or a box sample)."""
    for trace in fig.data:
        values = trace.y if trace.y is not None else trace.x
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


def escalation_overall(sources: Sources, runs: Runs) -> Chart:
    if why := _no_path(sources, runs):
        return why
    f = _fig("chart-escalation-overall", "share escalated", [0, 1])
    pathed = [n for n, evs in sources.items() if with_path(evs)]
    f.add_bar(x=pathed, y=[escalation_rate(sources[n]) for n in pathed], name="escalation rate")
    return f


def escalation_grouped(chart: str, sources: Sources, runs: Runs) -> Chart:
    """By category, or by reflection round (which needs the answers' traces)."""
    if why := _no_path(sources, runs):
        return why
    f = _fig(chart, "share escalated", [0, 1])
    for n, evs in sources.items():
        groups = (
            escalation_by(evs, "category")
            if chart == "chart-escalation-category"
            else escalation_by_round(evs)
        )
        if groups:
            f.add_bar(
                x=list(groups),
                y=[v[0] for v in groups.values()],
                name=n,
                customdata=[v[1] for v in groups.values()],
                hovertemplate="%{x}: %{y:.1%} of %{customdata}<extra>" + n + "</extra>",
            )
    if has_data(f):
        return f
    if chart == "chart-escalation-category":
        return "no answer on a light/deep path carries a question category"
    return "no per-round detail: the answers' traces (traces.jsonl) hold no reflection rounds"


def escalation_order(sources: Sources, runs: Runs) -> Chart:
    if why := _no_path(sources, runs):
        return why
    f = _fig("chart-escalation-order", "share escalated", [0, 1])
    for n, evs in sources.items():
        pts = escalation_by_order(evs)
        if pts:
            f.add_scatter(
                x=[p[1] for p in pts],
                y=[p[2] for p in pts],
                customdata=[[p[0], p[3]] for p in pts],
                hovertemplate="questions %{customdata[0]}-%{x}: %{y:.1%} of %{customdata[1]}"
                "<extra>" + n + "</extra>",
                mode="lines+markers",
                name=n,
            )
    f.update_xaxes(title="question # (dataset order; store traces: order of arrival)")
    return f


def per_path_boxes(chart: str, attr: str, sources: Sources, runs: Runs) -> Chart:
    """One box per (source, path) of an Event attribute ("tokens", "latency_ms")."""
    if not any(sources.values()):
        return _no_answers(runs)
    if attr == "tokens" and not any(e.tokens for evs in sources.values() for e in evs):
        return (
            "no model tokens: every answer came from the extractive backend, which calls no model"
        )
    f = _fig(chart)
    for n, evs in sources.items():
        for path in ("light", "deep", "none"):
            vals = [getattr(e, attr) for e in evs if e.path == path]
            if vals:
                f.add_box(y=vals, name=f"{n} · {path}", boxpoints=False)
    # The tick labels name each box; a legend repeating them would crowd the chart.
    f.update_layout(showlegend=False, height=460, margin={"b": 170})
    f.update_xaxes(tickangle=-40)
    return f


def accuracy_path(sources: Sources, runs: Runs) -> Chart:
    """Mean F1 (LoCoMo) or judge accuracy (LongMemEval) of answers ending on each path."""
    if why := _no_path(sources, runs):
        return why
    pathed = [n for n, evs in sources.items() if with_path(evs)]
    acc = {n: accuracy_by_path(sources[n]) for n in pathed}
    f = _fig("chart-accuracy-path", "mean F1 / judge accuracy", [0, 1])
    for path in ("light", "deep"):
        ys = [_score(acc[n].get(path, {})) for n in pathed]
        f.add_bar(x=pathed, y=ys, name=f"{path} path")
    if has_data(f):
        return f
    return "no answer on a light/deep path has an F1 or a judge verdict"


def _score(cell: Mapping[str, Any]) -> float | None:
    f1 = cell.get("f1")
    return f1 if f1 is not None else cell.get("judge")


def runs_side_by_side(sources: Sources, runs: Runs) -> Chart:
    """Overall F1 per system (LoCoMo) or judge accuracy per QA system (LongMemEval)."""
    f = _fig("chart-runs", "F1 / judge accuracy", [0, 1])
    for name, summary in runs:
        if summary.get("benchmark") == "longmemeval":
            qa = summary.get("qa") or {}
            x, y = list(qa), [s.get("accuracy") for s in qa.values()]
        else:
            systems = summary.get("systems") or {}
            x, y = list(systems), [(s.get("f1") or {}).get("overall") for s in systems.values()]
        if any(v is not None for v in y):
            f.add_bar(x=x, y=y, name=f"{name} ({summary.get('label', '')})")
    if has_data(f):
        return f
    if not runs:
        return "no evaluation run was given (--runs)"
    if not any(sources.values()):
        return _no_answers(runs)
    return "no run has an answer score per system (F1, or a judge's accuracy)"


def retrieval(sources: Sources, runs: Runs) -> Chart:
    """Evidence recall@k per system: LoCoMo's levels and modes (hymem's summaries and segments,
    the flat turn baselines), LongMemEval's recall_any at session (solid) and turn (dashed)
    level."""
    f = _fig("chart-retrieval", "recall", [0, 1])
    keys: set[str] = set()
    for name, summary in runs:
        ret = summary.get("retrieval") or {}
        if "levels" in ret:
            _lme_recall(f, name, ret["levels"])
            keys.add("LongMemEval recall_any: session solid, turn dashed")
        elif ret.get("rows"):
            _locomo_recall(f, name, ret["rows"])
            keys.add("LoCoMo: summary solid, segment dotted, turn dashed")
    f.update_layout(
        title=f"{CHART_TITLES['chart-retrieval']}<br><sup>{'; '.join(sorted(keys))}</sup>"
    )
    f.update_xaxes(title="k", type="category")
    # One legend line per system (the names are long): room below the plot for all of them.
    lines = len(f.data)
    f.update_layout(
        height=400 + 19 * lines,
        margin={"b": 100 + 19 * lines},
        legend={"orientation": "h", "yanchor": "top", "y": -0.3},
    )
    if has_data(f):
        return f
    return "no run scored retrieval (LoCoMo: --retrieval-eval; LongMemEval always does)"


def _lme_recall(f: go.Figure, run: str, levels: Mapping[str, Any]) -> None:
    for level, dash in (("session", "solid"), ("turn", "dash")):
        for system, scores in (levels.get(level) or {}).items():
            overall = scores.get("overall", {})
            ks = sorted(int(k.split("@")[1]) for k in overall if k.startswith("recall_any@"))
            f.add_scatter(
                x=[str(k) for k in ks],
                y=[overall[f"recall_any@{k}"] for k in ks],
                mode="lines+markers",
                line={"dash": dash},
                name=f"{run}/{system} ({level})",
            )


def _locomo_recall(f: go.Figure, run: str, rows: Sequence[Mapping[str, Any]]) -> None:
    lines: dict[tuple[str, str], dict[int, float | None]] = {}
    for r in rows:
        if r.get("credit", "source") == "source":  # the pre-provenance rows stay in the report
            lines.setdefault((r["level"], r["mode"]), {})[int(r["k"])] = r.get("recall")
    dashes = {"summary": "solid", "segment": "dot", "turn": "dash"}
    for (level, mode), by_k in lines.items():
        ks = sorted(by_k)
        f.add_scatter(
            x=[str(k) for k in ks],
            y=[by_k[k] for k in ks],
            mode="lines+markers",
            line={"dash": dashes.get(level, "solid")},
            name=f"{run}/{level} {mode}",
        )


_BUILDERS: dict[str, Callable[[Sources, Runs], Chart]] = {
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


def build_charts(sources: Sources, runs: Runs) -> dict[str, Chart]:
    """Every chart in page order: its figure when it has data, else why it is absent."""
    out: dict[str, Chart] = {}
    for chart in CHART_IDS:
        built = _BUILDERS[chart](sources, runs)
        out[chart] = built if isinstance(built, str) or has_data(built) else "nothing to draw"
    return out


__all__ = ["CHART_IDS", "CHART_TITLES", "Chart", "build_charts", "has_data"]
