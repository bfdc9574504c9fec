"""The tables `object_store.py` prints: per configuration, then the catch-up lag."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def cell(x: float, fmt: str = ".1f") -> str:
    return "–" if x != x else format(x, fmt)  # NaN: nothing measured


def report(rows: list[dict[str, Any]], lag: dict[str, Any], embedder: str, args: Any) -> None:
    local = rows[0]["turns_per_s"]
    print(
        f"\n{args.users} users x {args.turns} turns, {args.threads} thread(s) and "
        f"{args.searches} searches per worker, "
        f"embedder {embedder}, extractive LLM, moto on 127.0.0.1 "
        f"(+{args.latency_ms:g} ms a request), {os.cpu_count()} cores"
    )
    print(
        "\n| store | shards | workers | ingest s | turns/s | vs local | search p50 ms | p95 ms "
        "| other workers' users p50 | p95 | add p50 / p99 / max ms | failed calls "
        "| worker CPU s | moto CPU s |"
    )
    print("| --- " * 14 + "|")
    for r in rows:
        print(
            f"| {r['store']} | {r['shards']} | {r['workers']} | {r['ingest_s']:.1f} "
            f"| {r['turns_per_s']:.1f} "
            f"| {r['turns_per_s'] / local:.2f}x | {r['search_p50']:.1f} | {r['search_p95']:.1f} "
            f"| {cell(r['other_p50'])} | {cell(r['other_p95'])} | {r['add_p50']:.0f} / "
            f"{r['add_p99']:.0f} / {r['add_max']:.0f} | {r['errors']} | {r['worker_cpu_s']:.1f} "
            f"| {r['moto_cpu_s']:.1f} |"
        )
    print(f"\nCatch-up lag (burst of {lag['burst']} turns, refresh_s={lag['refresh_s']}):")
    for key, what in (("default", "default refresh_s"), ("forced", "Memory.refresh() per poll")):
        lags, early = lag[key]["lag_s"], lag[key]["from_flush_start_s"]
        print(
            f"- {what}: after flush returned median {np.median(lags):.2f} s, max "
            f"{max(lags):.2f} s; after flush began median {np.median(early):.2f} s, max "
            f"{max(early):.2f} s ({len(lags)} bursts; flush median "
            f"{np.median(lag[key]['flush_s']):.2f} s)"
        )
    empty = sum(r["empty_results"] for r in rows)
    fds = [d for r in rows for d in r["fd_delta"]]
    threads = [d for r in rows for d in r["thread_delta"]]
    print(f"\nempty search results: {empty}; fds / threads left after close: {fds} / {threads}")
    for r in rows:
        for sample in r["error_samples"]:
            print(f"- failed call ({r['store']} x{r['workers']}): {sample}")


__all__ = ["cell", "pct", "report"]
