"""What tracing and metrics cost: `ask` and `add` latency with both on versus both off (issue
33, target: within 5 %).

    python benchmarks/ops_overhead.py [--locomo PATH] [--sessions 10] [--asks 150] [--rounds 3]

* off: no OpenTelemetry SDK (the API's no-op tracer, as for any application that configures
  none) and no observer on the Memory;
* on: an SDK `TracerProvider` with a `BatchSpanProcessor` around an exporter that drops what it
  gets (the cost of making and queueing every span, minus a network), plus the Prometheus
  `Metrics` observer `hymem serve` attaches, scraped once per round.

One LoCoMo conversation's first sessions are stored once (extractive summariser, the real
MiniLM embedder); each round copies that folder and runs one configuration in a fresh process
(OpenTelemetry allows one provider per process), off and on alternating, so drift on a shared
machine falls on both. Per round: every question of the conversation asked (`depth="auto"`,
extractive: no model time, so the overhead is not diluted by it), then `add` of one session's
messages followed by `flush`, once per remaining session. Printed: median and p95 per
operation and configuration, and on/off ratios of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO / ".." / "shared" / "data" / "locomo" / "locomo10-dev.json"
USER = "conv"


def _conversation(path: Path) -> tuple[list[Any], list[str]]:
    from hymem.backfill.histories import locomo_histories
    from hymem.evaluation.locomo_data import load_locomo

    conv = load_locomo(path)[0]
    (history,) = locomo_histories([conv])
    return history.sessions, [q.question for q in conv.qa]


def _open(folder: Path) -> Any:
    from hymem import Memory, MemoryConfig

    return Memory(folder, config=MemoryConfig.defaults(llm="extractive"), create=True)


def build(folder: Path, path: Path, sessions: int) -> None:
    stored, _ = _conversation(path)
    with _open(folder) as mem:
        for s in stored[:sessions]:
            mem.add(s.messages, user_id=USER, session_id=s.session_id, timestamp=s.timestamp)
        mem.flush(user_id=USER)


class _Drop:
    """A span exporter that accepts and forgets: the SDK's work without a network."""

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def worker(folder: Path, path: Path, sessions: int, asks: int, on: bool) -> dict[str, Any]:
    """One configuration in this process: latencies (ms) per operation."""
    metrics = None
    if on:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(_Drop()))  # type: ignore[arg-type]  # duck-typed exporter
        trace.set_tracer_provider(provider)
    stored, questions = _conversation(path)
    out: dict[str, list[float]] = {"ask": [], "add+flush": []}
    with _open(folder) as mem:
        if on:
            from hymem.ops.metrics import Metrics

            metrics = Metrics(mem)
            mem.observers.add(metrics)
        for q in questions[:5]:  # warm: models loaded, caches filled
            mem.ask(q, user_id=USER)
        for q in questions[:asks]:
            started = time.perf_counter()
            mem.ask(q, user_id=USER)
            out["ask"].append((time.perf_counter() - started) * 1000)
        for s in stored[sessions:]:
            started = time.perf_counter()
            mem.add(s.messages, user_id=USER, session_id=s.session_id, timestamp=s.timestamp)
            mem.flush(user_id=USER)
            out["add+flush"].append((time.perf_counter() - started) * 1000)
        if metrics is not None:
            metrics.exposition()  # one scrape, as Prometheus would
    return out


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--locomo", type=Path, default=LOCOMO)
    ap.add_argument("--sessions", type=int, default=10, help="sessions stored before measuring")
    ap.add_argument("--asks", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=3, help="rounds per configuration")
    ap.add_argument("--worker", choices=["on", "off"], help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        result = worker(args.folder, args.locomo, args.sessions, args.asks, args.worker == "on")
        print(json.dumps(result))
        return

    from rich.console import Console
    from rich.table import Table

    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        console.print(f"building the base store ({args.sessions} sessions) ...")
        build(base, args.locomo, args.sessions)
        runs: dict[str, dict[str, list[float]]] = {"off": {}, "on": {}}
        for r in range(args.rounds):
            for config in ("off", "on") if r % 2 == 0 else ("on", "off"):
                folder = Path(tmp) / f"{config}-{r}"
                shutil.copytree(base, folder)
                cmd = [sys.executable, __file__, "--worker", config, "--folder", str(folder)]
                cmd += ["--locomo", str(args.locomo), "--sessions", str(args.sessions)]
                cmd += ["--asks", str(args.asks)]
                done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                for op, values in json.loads(done.stdout.splitlines()[-1]).items():
                    runs[config].setdefault(op, []).extend(values)
                console.print(f"round {r + 1}/{args.rounds}: {config} done")
    table = Table(title="tracing + metrics on vs off (ms; target: on/off median <= 1.05)")
    for col in ("operation", "n", "off p50", "on p50", "on/off p50", "off p95", "on p95"):
        table.add_column(col, justify="right")
    for op in ("ask", "add+flush"):
        off, on = runs["off"][op], runs["on"][op]
        ratio = statistics.median(on) / statistics.median(off)
        table.add_row(
            op,
            str(len(on)),
            f"{statistics.median(off):.1f}",
            f"{statistics.median(on):.1f}",
            f"{ratio:.3f}",
            f"{_p(off, 0.95):.1f}",
            f"{_p(on, 0.95):.1f}",
        )
    console.print(table)


if __name__ == "__main__":
    main()
