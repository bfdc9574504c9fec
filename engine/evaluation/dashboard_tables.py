"""The dashboard's tables: the key numbers per source (stable ids and data attributes, so a
browser test or a script can read them back) and each run's retrieval and matched-budget
tables, rendered from the very markdown the run's report.md holds so the two never disagree."""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from hymem.evaluation.dashboard_data import Event, key_numbers
from hymem.read.trace_record import Trace

KEY_METRICS: tuple[tuple[str, str, str], ...] = (
    ("questions", "Questions", "int"),
    ("escalation_rate", "Escalation rate", "pct"),
    ("mean_f1", "Mean F1", "pct"),
    ("light_f1", "Light-path F1", "pct"),
    ("deep_f1", "Deep-path F1", "pct"),
    ("mean_tokens", "Model tokens / question", "num"),
    ("latency_p50_ms", "Latency p50 (ms)", "num"),
    ("latency_p95_ms", "Latency p95 (ms)", "num"),
)


def tokens_title(events: Sequence[Event]) -> str:
    """Whose tokens the key numbers count: a model's, the extractive backend's (counted, but
    no model spent them), or both when the sources differ."""
    kinds = {e.extractive for e in events}
    if kinds == {True}:
        return "Extractive tokens / question"
    if kinds == {False}:
        return "Model tokens / question"
    return "Tokens / question (model or extractive)"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


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


def key_numbers_table(
    sources: Mapping[str, list[Event]], colours: Mapping[str, str] | None = None
) -> str:
    """One row per source; a metric no source has a value for (F1 of a LongMemEval run, whose
    answers are judged instead) is left out rather than shown as a column of dashes. `colours`:
    each source's chart colour, shown as a bar beside its name so the table keys the charts."""
    nums = {src: key_numbers(events) for src, events in sources.items() if events}
    if not nums:
        return ""
    metrics = [m for m in KEY_METRICS if any(n[m[0]] is not None for n in nums.values())]
    every = [e for events in sources.values() for e in events]
    metrics = [(m, tokens_title(every) if m == "mean_tokens" else t, k) for m, t, k in metrics]
    head = "".join(f"<th>{html.escape(t)}</th>" for _, t, _ in metrics)
    rows = []
    for src, n in nums.items():
        cells = "".join(
            f'<td id="kn-{slug(src)}-{slug(m)}" data-metric="{m}" '
            f'data-value="{_data_value(n[m])}">'
            f"{_fmt(n[m], kind)}</td>"
            for m, _, kind in metrics
        )
        colour = (colours or {}).get(src)
        mark = f' style="border-left:6px solid {html.escape(colour)}"' if colour else ""
        rows.append(
            f'<tr data-source="{html.escape(src)}"><th{mark}>{html.escape(src)}</th>{cells}</tr>'
        )
    return (
        f'<table id="key-numbers"><thead><tr><th>Source</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _inline(text: str) -> str:
    out = html.escape(text, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_html(lines: Sequence[str], *, table_attrs: str = "") -> str:
    """The report's markdown subset as HTML: headings (shifted two levels down, under the
    page's own), pipe tables, paragraphs and list items."""
    out: list[str] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        heading = re.match(r"^(#{1,4}) (.*)$", line)
        if heading:
            flush()
            level = min(len(heading.group(1)) + 2, 6)
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.startswith("|"):
            flush()
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            head = "".join(f"<th>{_inline(c)}</th>" for c in _cells(block[0]))
            body = "".join(
                "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(row)) + "</tr>"
                for row in block[2:]
            )
            out.append(
                f"<table{table_attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            )
            continue
        elif line.startswith("- "):
            flush()
            out.append(f"<ul><li>{_inline(line[2:])}</li></ul>")
        elif not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "".join(out)


def retrieval_markdown(summary: Mapping[str, Any]) -> list[str]:
    """A run's retrieval and matched-budget sections, exactly as its report.md has them."""
    if not summary.get("retrieval"):
        return []
    if summary.get("benchmark") == "longmemeval":
        from hymem.evaluation.longmemeval.report import retrieval_sections

        return retrieval_sections(dict(summary))
    from hymem.evaluation.report_retrieval import budget_section, recall_at_k_section

    return [*recall_at_k_section(summary["retrieval"]), *budget_section(summary["retrieval"])]


def retrieval_tables(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Each run's retrieval tables under its name; empty when no run scored retrieval."""
    parts = []
    for name, summary in runs:
        lines = retrieval_markdown(summary)
        if lines:
            attrs = f' class="report-table" data-run="{html.escape(name)}"'
            parts.append(
                f'<section class="run-retrieval" data-run="{html.escape(name)}">'
                f"<h3>{html.escape(name)}: {html.escape(str(summary.get('label', '')))}</h3>"
                f"{markdown_html(lines, table_attrs=attrs)}</section>"
            )
    return "".join(parts)


RECENT_ASKS = 200  # the asks listed with their replay command, newest first


def replay_command(trace: Trace, store: str | None) -> str:
    """The command that replays `trace` (`hymem replay`): what it read then beside today."""
    where = f" --store {shlex.quote(store)}" if store else ""
    return f"hymem replay {trace.trace_id} -u {shlex.quote(trace.user_id)}{where}"


def asks_table(traces: Sequence[Trace], store: str | None = None) -> str:
    """The newest asks, each linked to its replay: the command that shows what it read and
    answered then beside what the same question gets from today's memory."""
    if not traces:
        return ""
    newest = sorted(traces, key=lambda t: (t.created_at, t.trace_id), reverse=True)
    rows = "".join(
        f"<tr id='trace-{html.escape(t.trace_id)}'>"
        f"<td>{t.created_at.isoformat(sep=' ', timespec='seconds')}</td>"
        f"<td>{html.escape(t.user_id)}</td><td>{html.escape(t.question[:200])}</td>"
        f"<td>{html.escape(t.path or 'failed')}</td><td>{'yes' if t.escalated else 'no'}</td>"
        f"<td>{t.total_tokens}</td><td><code class='replay'>"
        f"{html.escape(replay_command(t, store))}</code></td></tr>"
        for t in newest[:RECENT_ASKS]
    )
    head = (
        "<tr><th>asked (UTC)</th><th>user</th><th>question</th><th>path</th>"
        "<th>escalated</th><th>tokens</th><th>replay</th></tr>"
    )
    shown = min(len(newest), RECENT_ASKS)
    return (
        f"<h2>Recent asks</h2><p class='note'>The newest {shown} of {len(newest)}; run a row's "
        "replay command to see what that ask read and answered beside what today's memory "
        f"gives.</p><div class='scroll'><table id='recent-asks'>{head}{rows}</table></div>"
    )


__all__ = [
    "KEY_METRICS",
    "RECENT_ASKS",
    "asks_table",
    "key_numbers_table",
    "markdown_html",
    "replay_command",
    "retrieval_markdown",
    "retrieval_tables",
    "slug",
    "tokens_title",
]
