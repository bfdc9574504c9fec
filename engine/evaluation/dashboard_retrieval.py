"""The dashboard's recall@k chart, one panel per level of the memory and one row per run.

Drawn as one chart of every (level, mode) line it was unreadable: LoCoMo's nine lines of two
points each (k = 5 and 10), told apart only by a dash code in the subtitle, several lying on top
of each other. Now each level is its own panel (summaries: what the light path reads; segments:
what the deep path reads; raw turns: the flat baselines), LoCoMo's three retrieval modes are
grouped bars in three greys (two k values make bars, not lines; greys so no mode looks like an
answer source), and LongMemEval's systems are lines across its six k values in their page
colours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from hymem.evaluation.dashboard_style import MODE_COLOURS, Styles, same_as
from plotly.subplots import make_subplots

LOCOMO_LEVELS: dict[str, str] = {
    "summary": "summaries (light path)",
    "segment": "segments (deep path)",
    "turn": "raw turns (baselines)",
}
LME_LEVELS: dict[str, str] = {"session": "sessions", "turn": "turns"}
ROW_HEIGHT = 260

# One panel: its title and its traces (already styled), drawn in one subplot cell.
Panel = tuple[str, list[go.Scatter | go.Bar]]


def _locomo_panels(rows: Sequence[Mapping[str, Any]], shown: set[str]) -> list[Panel]:
    """Per level, recall at each k grouped by mode; each mode in the legend once per chart."""
    by_level: dict[str, dict[str, dict[int, float | None]]] = {}
    for r in rows:
        if r.get("credit", "source") == "source":  # the pre-provenance rows stay in the report
            by_level.setdefault(r["level"], {}).setdefault(r["mode"], {})[int(r["k"])] = r.get(
                "recall"
            )
    panels: list[Panel] = []
    for level in [*LOCOMO_LEVELS, *sorted(set(by_level) - set(LOCOMO_LEVELS))]:
        modes = by_level.get(level)
        if not modes:
            continue
        traces: list[go.Scatter | go.Bar] = []
        for mode, by_k in modes.items():
            ks = sorted(by_k)
            traces.append(
                go.Bar(
                    x=[f"k={k}" for k in ks],
                    y=[by_k[k] for k in ks],
                    name=mode,
                    legendgroup=f"mode:{mode}",
                    showlegend=mode not in shown,
                    marker_color=MODE_COLOURS.get(mode, "#999999"),
                    hovertemplate=f"{level} {mode}, " + "%{x}: %{y:.1%}<extra></extra>",
                )
            )
            shown.add(mode)
        panels.append((LOCOMO_LEVELS.get(level, level), traces))
    return panels


def _lme_panels(
    run: str, levels: Mapping[str, Any], styles: Styles, shown: set[str]
) -> list[Panel]:
    """Per level, recall_any across k, one line per system in its page colour, dash and marker.
    A system's legend entry names, per panel, the system whose line it repeats there (their
    lines lie on top of each other), since one legend entry stands for both panels."""
    panels: list[Panel] = []
    twins_of: dict[str, list[str]] = {}
    drawn: list[go.Scatter] = []
    for level, title in LME_LEVELS.items():
        series: dict[str, tuple[list[str], list[Any]]] = {}
        for system, scores in (levels.get(level) or {}).items():
            overall = scores.get("overall", {})
            ks = sorted(int(k.split("@")[1]) for k in overall if k.startswith("recall_any@"))
            xs, ys = [str(k) for k in ks], [overall[f"recall_any@{k}"] for k in ks]
            series[f"{run}/{system}"] = (xs, ys)
        if not series:
            continue
        for key, twin in same_as(series).items():
            twins_of.setdefault(key, []).append(f"{title}: = {styles.label(twin)}")
        traces: list[go.Scatter | go.Bar] = []
        for key, (xs, ys) in series.items():
            st = styles[key]
            trace = go.Scatter(
                x=xs,
                y=ys,
                mode="lines+markers",
                name=key,
                legendgroup=key,
                showlegend=key not in shown,
                line={"color": st.colour, "dash": st.dash},
                marker={"color": st.colour, "symbol": st.symbol, "size": 7},
            )
            traces.append(trace)
            drawn.append(trace)
            shown.add(key)
        panels.append((title, traces))
    for trace in drawn:
        key = str(trace.legendgroup)
        note = f" ({'; '.join(twins_of[key])})" if key in twins_of else ""
        trace.name = styles.label(key) + note
    return panels


def retrieval(
    sources: Mapping[str, Any], runs: Sequence[tuple[str, Mapping[str, Any]]], styles: Styles
) -> go.Figure | str:
    """Evidence recall@k of every run that scored retrieval, or why there is none."""
    rows: list[tuple[str, list[Panel]]] = []
    shown: set[str] = set()
    for name, summary in runs:
        ret = summary.get("retrieval") or {}
        if "levels" in ret:
            panels = _lme_panels(name, ret["levels"], styles, shown)
        else:
            panels = _locomo_panels(ret.get("rows") or [], shown)
        if panels:
            rows.append((name, panels))
    if not any(
        v is not None for _, panels in rows for _, ts in panels for t in ts for v in t.y or ()
    ):
        return "no run scored retrieval (LoCoMo: --retrieval-eval; LongMemEval always does)"
    cols = max(len(panels) for _, panels in rows)
    titles = [panels[c][0] if c < len(panels) else "" for _, panels in rows for c in range(cols)]
    fig = make_subplots(
        rows=len(rows),
        cols=cols,
        shared_yaxes=True,
        subplot_titles=titles,
        horizontal_spacing=0.04,
        vertical_spacing=0.15,
    )
    for r, (name, panels) in enumerate(rows, 1):
        for c, (_, traces) in enumerate(panels, 1):
            for trace in traces:
                fig.add_trace(trace, row=r, col=c)
        # Several runs: each row says whose it is, beside it rather than in the narrow titles.
        fig.update_yaxes(title=f"{name}<br>recall" if len(rows) > 1 else "recall", row=r, col=1)
    # The legend sits below the panels and gets the room it needs (LongMemEval's entries are
    # long, one per line), rather than a scroll bar inside the chart.
    names = [str(t.name) for t in fig.data if t.showlegend is not False]
    lines = len(names) if any(len(n) > 30 for n in names) else -(-len(names) // 4)
    bottom = 50 + 22 * lines
    fig.update_layout(
        template="plotly_white",
        width=620,
        height=40 + ROW_HEIGHT * len(rows) + bottom,
        margin={"l": 60, "r": 20, "t": 40, "b": bottom},
        barmode="group",
        legend={"orientation": "h", "y": -30 / (ROW_HEIGHT * len(rows)), "yanchor": "top"},
    )
    fig.update_annotations(font_size=12)
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    fig.update_xaxes(tickangle=0, type="category")
    return fig


__all__ = ["LME_LEVELS", "LOCOMO_LEVELS", "retrieval"]
