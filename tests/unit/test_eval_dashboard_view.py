"""What a reader of the dashboard trips over (issue 49, friction 17), checked on the built
figures and page: one colour per source in every chart, identical lines told apart, tick labels
never rotated, recall@k one panel per memory level, chart titles as headings the mode bar cannot
cover, a glossary above the charts, and the short panels before the long report tables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from hymem.evaluation.dashboard import chart_html, render_dashboard
from hymem.evaluation.dashboard_data import Event
from hymem.evaluation.dashboard_figures import CHART_TITLES, build_charts
from hymem.manage.audit import AuditReport, UserAudit

from tests.fixtures_eval import fixture_traces, make_run_dir

# (path, escalated, category, f1, tokens, latency ms, rounds escalated): hymem's answers,
# which no-reflection repeats exactly (as an extractive run's often do).
PATHED = [
    ("light", False, "single_hop", 1.0, 300, 20.0, [False]),
    ("deep", True, "multi_hop", 0.5, 900, 200.0, [True]),
    ("light", False, "temporal", 0.8, 250, 25.0, [False]),
    ("deep", True, "single_hop", 0.4, 1100, 240.0, [True]),
]
LEVELS = ("summary", "segment", "turn")
MODES = ("dense", "hybrid", "lexical")


def _events(source: str, rows: list[tuple[Any, ...]]) -> list[Event]:
    return [
        Event(
            source=source,
            path=path,
            escalated=esc,
            category=cat,
            f1=f1,
            tokens=tokens,
            latency_ms=lat,
            rounds_escalated=rounds,
            order=i,
        )
        for i, (path, esc, cat, f1, tokens, lat, rounds) in enumerate(rows, 1)
    ]


def _retrieval() -> dict[str, Any]:
    """LoCoMo's retrieval rows: 3 levels x 3 modes at k = 5 and 10, plus the old measure's."""
    rows = [
        {"level": lv, "mode": m, "credit": "source", "k": k, "recall": 0.1 * (i + 1), "tokens": 9}
        for i, (lv, m) in enumerate((lv, m) for lv in LEVELS for m in MODES)
        for k in (5, 10)
    ]
    rows += [
        {"level": "summary", "mode": m, "credit": "segment", "k": k, "recall": 0.9, "tokens": 9}
        for m in MODES
        for k in (5, 10)
    ]
    return {"questions": 4, "rows": rows}


def _inputs() -> tuple[dict[str, list[Event]], list[tuple[str, dict[str, Any]]]]:
    baseline = [("none", False, "single_hop", 0.6, 150, 5.0, None)] * 4
    sources = {
        "run/hymem": _events("run/hymem", PATHED),
        "run/no-reflection": _events("run/no-reflection", PATHED),
        "run/naive-rag-k5": _events("run/naive-rag-k5", baseline),
    }
    scores = {"hymem": 0.675, "no-reflection": 0.675, "naive-rag-k5": 0.6}
    summary = {
        "label": "extractive (no LLM)",
        "systems": {s: {"f1": {"overall": v}} for s, v in scores.items()},
        "retrieval": _retrieval(),
    }
    return sources, [("run", summary)]


def _figures() -> dict[str, go.Figure]:
    charts = build_charts(*_inputs())
    figs = {c: f for c, f in charts.items() if not isinstance(f, str)}
    assert set(figs) == set(charts), {c: f for c, f in charts.items() if isinstance(f, str)}
    return figs


def _colour(trace: Any) -> str | None:
    marker = getattr(trace, "marker", None)
    line = getattr(trace, "line", None)
    return (marker.color if marker is not None else None) or (
        line.color if line is not None else None
    )


def test_each_source_keeps_one_colour_in_every_chart() -> None:
    sources, _ = _inputs()
    seen: dict[str, set[str]] = {}
    for chart, fig in _figures().items():
        for trace in fig.data:
            if chart == "chart-retrieval":
                continue  # retrieval modes, not answer sources (checked below)
            key = trace.legendgroup
            assert key in sources, (chart, trace.name, key)
            colour = _colour(trace)
            assert isinstance(colour, str), (chart, trace.name)
            seen.setdefault(key, set()).add(colour)
    assert set(seen) == set(sources)
    assert all(len(c) == 1 for c in seen.values()), seen
    assert len({next(iter(c)) for c in seen.values()}) == len(seen)  # and told apart


def test_identical_lines_are_drawn_apart_and_say_so() -> None:
    order = _figures()["chart-escalation-order"]
    lines = {t.legendgroup: t for t in order.data}
    hymem, twin = lines["run/hymem"], lines["run/no-reflection"]
    assert list(hymem.y) == list(twin.y)  # the same values...
    assert hymem.line.dash != twin.line.dash  # ...drawn so both show
    assert hymem.marker.symbol != twin.marker.symbol
    assert "same values as hymem" in twin.name and "same" not in hymem.name


def test_tick_labels_are_never_rotated_and_short() -> None:
    for chart, fig in _figures().items():
        layout = fig.to_plotly_json()["layout"]
        xaxes = [v for k, v in layout.items() if re.fullmatch(r"xaxis\d*", k)]
        assert xaxes and all(ax.get("tickangle") == 0 for ax in xaxes), chart
        for trace in fig.data:
            if getattr(trace, "orientation", None) == "h" or trace.x is None:
                continue
            labels = [str(x) for x in trace.x if isinstance(x, str)]
            too_long = [x for x in labels for line in x.split("<br>") if len(line) > 14]
            assert not too_long, (chart, too_long)


def test_recall_at_k_is_one_panel_per_level_with_one_series_per_mode() -> None:
    fig = _figures()["chart-retrieval"]
    layout = fig.to_plotly_json()["layout"]
    assert len([k for k in layout if re.fullmatch(r"xaxis\d*", k)]) == len(LEVELS)
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert sorted(legend) == sorted(MODES)
    per_panel: dict[str, int] = {}
    for trace in fig.data:
        per_panel[trace.xaxis] = per_panel.get(trace.xaxis, 0) + 1
    assert sorted(per_panel.values()) == [3, 3, 3]
    titles = [a["text"] for a in layout["annotations"]]
    assert titles == ["summaries (light path)", "segments (deep path)", "raw turns (baselines)"]


def test_titles_are_headings_the_mode_bar_cannot_cover() -> None:
    figs = _figures()
    for chart, fig in figs.items():
        assert not fig.layout.title.text, chart  # plotly's title sat under the mode bar
    drawn, _ = chart_html(dict(figs))
    for chart in figs:  # the heading right above each chart's div is its title
        start = drawn.rfind("<h3>", 0, drawn.index(f'<div id="{chart}"'))
        assert start >= 0, chart
        assert drawn[start + 4 : drawn.index("</h3>", start)] == CHART_TITLES[chart]
    assert drawn.count('"displayModeBar": "hover"') == len(figs)


def test_glossary_explains_the_terms_above_the_charts() -> None:
    page = render_dashboard(traces=fixture_traces())
    m = re.search(r"<section id='glossary'>(.*?)</section>", page, re.S)
    assert m, "no glossary"
    terms = m.group(1).lower()
    for term in ("escalat", "light path", "deep path", "model tokens", "fallback", "reflection"):
        assert term in terms, term
    assert page.index("id='glossary'") < page.index('id="chart-')


def test_health_and_asks_come_before_the_long_report_tables(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    (run / "summary.json").write_text(json.dumps({**summary, "retrieval": _retrieval()}))
    health = AuditReport(users=[UserAudit(user_id="u1", summaries=3)])
    page = render_dashboard(traces=fixture_traces(), runs=[run], health=health)
    order = [page.index(s) for s in ("memory-health", "recent-asks", 'class="run-retrieval"')]
    assert order == sorted(order), order
    # The asks list scrolls in its own box instead of pushing everything below it down.
    assert "<div class='scroll'><table id='recent-asks'>" in page
