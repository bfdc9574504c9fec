"""Figures from the measurements, three tables with each figure's ratio to hymem beside it, and
the issue's targets, hit or missed. The same text goes to the terminal and to `report.md`."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from measure import Outcome
from workload import mean, percentile, ratio

DATASETS = {"locomo": "LoCoMo", "longmemeval": "LME-S"}
MB = 1024 * 1024

Column = tuple[str, str, str]  # (figure key, header, number format)


def figures(o: Outcome) -> dict[str, float]:
    """One system's figures, NaN where not measured."""
    f: dict[str, float] = {}
    for ds in DATASETS:
        s, n = o.ingest_s.get(ds, math.nan), o.ingest_turns.get(ds, 0)
        f[f"ingest_{ds}"] = n / s if s and n else math.nan
        f[f"ingest_s_{ds}"] = s
        f[f"embed_share_{ds}"] = o.embed_s[ds] / s if ds in o.embed_s and s else math.nan
        f[f"r10_{ds}"] = mean(o.recall_k.get(ds, []))
        f[f"rb_{ds}"] = mean(o.recall_budget.get(ds, []))
        f[f"tok_{ds}"] = mean(o.tokens_budget.get(ds, []))
        f[f"rsb_{ds}"] = mean(o.recall_search_budget.get(ds, []))
    f["p50"], f["p95"] = percentile(o.search_ms, 50), percentile(o.search_ms, 95)
    f["ctx_p50"], f["ctx_p95"] = percentile(o.context_ms, 50), percentile(o.context_ms, 95)
    f["disk_mb"] = o.disk_bytes / MB if o.disk_bytes else math.nan
    f["cold_s"] = statistics.median(o.cold_s) if o.cold_s else math.nan
    for part in ("import_s", "open_s", "search_s"):
        vals = [p[part] for p in o.cold_parts]
        f[f"cold_{part}"] = statistics.median(vals) if vals else math.nan
    f["scale_load_s"] = o.scale_load_s
    f["scale_p50"], f["scale_p95"] = percentile(o.scale_ms, 50), percentile(o.scale_ms, 95)
    f["scale_disk_mb"] = o.scale_disk_bytes / MB if o.scale_disk_bytes else math.nan
    return f


def tables(budget: int, scale_n: int) -> list[tuple[str, list[Column]]]:
    ds = list(DATASETS.items())
    return [
        (
            "Ingest (turns/s, timed inside each worker), disk and cold start",
            [
                *((f"ingest_{d}", f"{name} turns/s", ".1f") for d, name in ds),
                ("disk_mb", "dev disk MB", ".1f"),
                ("cold_s", "cold start s", ".2f"),
            ],
        ),
        (
            f"Search latency, top-10 (ms); {scale_n:,} memories from precomputed vectors",
            [
                ("p50", "dev p50", ".1f"),
                ("p95", "dev p95", ".1f"),
                ("scale_p50", f"{scale_n:,} p50", ".1f"),
                ("scale_p95", f"{scale_n:,} p95", ".1f"),
                ("scale_load_s", f"{scale_n:,} load s", ".1f"),
                ("scale_disk_mb", f"{scale_n:,} disk MB", ".1f"),
            ],
        ),
        (
            f"Evidence recall at k = 10 and at {budget} context tokens",
            [
                col
                for d, name in ds
                for col in (
                    (f"r10_{d}", f"{name} R@10", ".3f"),
                    (f"rb_{d}", f"{name} R@{budget}tok", ".3f"),
                    (f"tok_{d}", f"{name} tokens used", ".0f"),
                )
            ],
        ),
    ]


def cell(value: float, reference: float, fmt: str, *, is_reference: bool) -> str:
    if math.isnan(value):
        return "-"
    text = format(value, fmt)
    return text if is_reference else f"{text} ({ratio(value, reference)})"


def markdown(figs: dict[str, dict[str, float]], budget: int, scale_n: int) -> list[str]:
    """The three tables as Markdown, ratios to hymem in brackets."""
    ref = figs.get("hymem", {})
    out: list[str] = []
    for title, cols in tables(budget, scale_n):
        out += [f"**{title}**", "", "| system | " + " | ".join(h for _, h, _ in cols) + " |"]
        out.append("|" + " --- |" * (len(cols) + 1))
        for name, f in figs.items():
            cells = [
                cell(f[k], ref.get(k, math.nan), fmt, is_reference=name == "hymem")
                for k, _, fmt in cols
            ]
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def notes(figs: dict[str, dict[str, float]], budget: int) -> list[str]:
    """hymem's own extra figures: its plain search cut to the budget, its context latency,
    and where a cold start's time goes."""
    out = []
    for name, f in figs.items():
        if not name.startswith("hymem"):
            continue
        rsb = ", ".join(
            f"{label} {f[f'rsb_{d}']:.3f}"
            for d, label in DATASETS.items()
            if not math.isnan(f[f"rsb_{d}"])
        )
        out.append(
            f"- {name}: recall at {budget} tokens of its plain search ranking (not the light "
            f"context) {rsb or '-'}; light context p50/p95 {f['ctx_p50']:.1f}/{f['ctx_p95']:.1f} ms"
        )
    for name, f in figs.items():
        for d, label in DATASETS.items():
            if not math.isnan(f.get(f"embed_share_{d}", math.nan)):
                out.append(
                    f"- {name} ingest {label}: {f[f'ingest_s_{d}']:.1f} s, of which "
                    f"{100 * f[f'embed_share_{d}']:.0f}% inside its embedder"
                )
    for name, f in figs.items():
        if math.isnan(f["cold_s"]):
            continue
        out.append(
            f"- {name} cold start {f['cold_s']:.2f} s: import {f['cold_import_s']:.2f}, open "
            f"{f['cold_open_s']:.2f}, first search {f['cold_search_s']:.3f} (the rest: "
            "interpreter start-up and the worker's own imports)"
        )
    return out


def targets(figs: dict[str, dict[str, float]], budget: int, scale_n: int = 100_000) -> list[str]:
    """The issue's three targets against the measured figures."""
    ref = figs.get("hymem")
    if ref is None:
        return []
    peers = {n: f for n, f in figs.items() if not n.startswith("hymem")}
    out = []
    for d, label in DATASETS.items():
        best = max(peers.items(), key=lambda kv: _num(kv[1][f"rb_{d}"]), default=None)
        if best is None or math.isnan(ref[f"rb_{d}"]):
            continue
        hit = ref[f"rb_{d}"] > best[1][f"rb_{d}"]
        out.append(
            f"- recall at {budget} tokens, {label}: hymem {ref[f'rb_{d}']:.3f} vs best peer "
            f"{best[0]} {best[1][f'rb_{d}']:.3f}: {'met' if hit else 'MISSED'}"
        )
    fastest = min(peers.items(), key=lambda kv: _num(kv[1]["scale_p95"], math.inf), default=None)
    if fastest is not None and not math.isnan(ref["scale_p95"]):
        limit = 1.2 * fastest[1]["scale_p95"]
        out.append(
            f"- {scale_n:,}-memory p95: hymem {ref['scale_p95']:.1f} ms vs 1.2 x fastest peer "
            f"({fastest[0]} {fastest[1]['scale_p95']:.1f}) = {limit:.1f} ms: "
            f"{'met' if ref['scale_p95'] <= limit else 'MISSED'}"
        )
    for ours in ("hymem", "hymem-1turn"):
        # like with like: one-turn adds against mem0's one-turn adds when they were run
        theirs = "mem0-1turn" if ours == "hymem-1turn" and "mem0-1turn" in figs else "mem0"
        if ours not in figs or theirs not in figs:
            continue
        for d, label in DATASETS.items():
            a, b = figs[ours][f"ingest_{d}"], figs[theirs][f"ingest_{d}"]
            if not (math.isnan(a) or math.isnan(b)):
                out.append(
                    f"- ingest {label}: {ours} {a:.1f} turns/s vs {theirs} {b:.1f}: "
                    f"{'met' if a >= b else 'MISSED'}"
                )
    return out


def _num(x: float, missing: float = -math.inf) -> float:
    return missing if math.isnan(x) else x


def render(
    outcomes: dict[str, Outcome], meta: dict[str, Any], budget: int, scale_n: int
) -> tuple[str, dict[str, dict[str, float]]]:
    """The whole report as Markdown, and the figures it was made from."""
    figs = {name: figures(o) for name, o in outcomes.items()}
    lines = [f"# hymem and its peers ({meta['date']})", "", f"```\n{meta['command']}\n```", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items() if k not in ("command", "date")]
    lines += [
        "",
        *markdown(figs, budget, scale_n),
        "**Targets**",
        "",
        *targets(figs, budget, scale_n),
    ]
    lines += ["", "**Notes**", "", *notes(figs, budget), ""]
    versions: Sequence[str] = [
        f"- {n}: " + ", ".join(f"{k} {v}" for k, v in o.versions.items())
        for n, o in outcomes.items()
        if not n.endswith("-1turn")
    ]
    lines += ["**Versions**", "", *versions, ""]
    return "\n".join(lines), figs
