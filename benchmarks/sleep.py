"""Sleep-time consolidation benchmark: update-queue building and parallel decisions.

    python benchmarks/sleep.py                      # 10k and 100k summaries (minutes on 2 cores)
    python benchmarks/sleep.py --sizes 2000 --sample 40     # a quick check

Queue building runs on *synthetic* vectors (clusters of near-duplicates on the unit sphere, dim
384 like MiniLM), one user, so every summary is compared with every later one: the worst case.
Decisions run through the real `DecisionRunner` (journal in memory) against an in-process
scripted Roles that sleeps a fixed latency per update call, like a remote model: sequential
(1 worker) versus parallel (N workers) on the same bounded sample of queues, and the measured
speed-up ratio (LightMem §3.3 claims queues are independent, so decisions parallelise).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from hymem.llm.roles import ContextItem, Role, RoleResult, UpdateOutput
from hymem.sleep.decide import Ask, DecisionRunner
from hymem.sleep.journal import SleepJournal
from hymem.sleep.queues import build_update_queues, temporal_ranks
from hymem.types import RoleUsage, SummaryRecord
from rich.console import Console
from rich.progress import track
from rich.table import Table

T0 = datetime(2023, 1, 1)


class LatencyRoles:
    """Update decisions after a fixed sleep; alternates update / ignore / delete."""

    label = "scripted-latency"

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.calls = 0
        self._lock = threading.Lock()

    def update(self, target: ContextItem, newer: list[ContextItem]) -> RoleResult[UpdateOutput]:
        time.sleep(self.latency_s)
        with self._lock:
            self.calls += 1
            n = self.calls
        action = ("update", "ignore", "delete")[n % 3]
        out = UpdateOutput(
            action=action,
            text=f"{target.text} and {newer[0].text}",
            evidence_id=newer[0].id,
            reason="benchmark",
        )
        return RoleResult(
            role=Role.UPDATE,
            output=out,
            usage=RoleUsage(calls=1, prompt_tokens=60, completion_tokens=20),
        )


def synthetic_vectors(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """n unit vectors in clusters of about 5 near-duplicates (cosine ~0.8 within a cluster)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, n // 5), dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    v = centres[rng.integers(0, len(centres), n)]
    v = v + rng.standard_normal((n, dim), dtype=np.float32) * (0.5 / np.sqrt(dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def bench_queues(n: int, dim: int, top_k: int, keep_n: int, floor: float) -> dict[str, float]:
    v = synthetic_vectors(n, dim)
    days = np.random.default_rng(1).integers(0, 365, n)
    ranks = temporal_ranks([(int(d), i) for i, d in enumerate(days)])
    q = build_update_queues(v, ranks, top_k=top_k, keep_n=keep_n, floor=floor)
    c = q.cost
    return {
        "summaries": n,
        "seconds": c.seconds,
        "queues": c.queues,
        "entries": c.entries,
        "similarities": c.similarities,
        "block_mb": c.block_bytes / 2**20,
        "queues_obj": q,
    }


def sample_asks(q: object, n: int, sample: int) -> list[Ask]:
    """Asks for the first `sample` non-empty queues (records are synthetic)."""

    def rec(i: int) -> SummaryRecord:
        t = T0 + timedelta(minutes=i)
        return SummaryRecord(
            id=f"s{i}",
            user_id="bench",
            segment_id=f"g{i}",
            text=f"synthetic fact number {i}",
            time_start=t,
            time_end=t,
            created_at=t,
            updated_at=t,
        )

    asks: list[Ask] = []
    for i in range(n):
        queue = q.queue(i)  # type: ignore[attr-defined]
        if queue:
            asks.append(Ask("bench", rec(i), [rec(j) for j, _ in queue], f"k{i}", T0))
        if len(asks) >= sample:
            break
    return asks


def bench_decisions(asks: list[Ask], workers: int, latency_s: float) -> dict[str, float]:
    roles = LatencyRoles(latency_s)
    runner = DecisionRunner(roles, SleepJournal(None))  # type: ignore[arg-type]
    started = time.perf_counter()
    kinds: dict[str, int] = {}
    for _, d in track(
        runner.run(asks, workers),
        total=len(asks),
        description=f"decisions, {workers} worker(s)",
        transient=True,
    ):
        kinds[d.kind] = kinds.get(d.kind, 0) + 1
    seconds = time.perf_counter() - started
    return {
        "workers": workers,
        "decisions": runner.asked,
        "seconds": seconds,
        "per_second": runner.asked / seconds if seconds else 0.0,
        **kinds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--top-k", type=int, default=20)
    ap.add_argument("--keep-n", type=int, default=10)
    ap.add_argument("--floor", type=float, default=0.6)
    ap.add_argument("--latency-ms", type=float, default=50.0)
    ap.add_argument("--sample", type=int, default=200, help="queues decided per run")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = ap.parse_args()

    console = Console(width=120)
    queue_rows, decision_rows = [], []
    for n in args.sizes:
        with console.status(f"building update queues for {n:,} summaries"):
            res = bench_queues(n, args.dim, args.top_k, args.keep_n, args.floor)
        q = res.pop("queues_obj")
        queue_rows.append(res)
        asks = sample_asks(q, n, args.sample)
        seq = bench_decisions(asks, 1, args.latency_ms / 1000)
        par = bench_decisions(asks, args.workers, args.latency_ms / 1000)
        decision_rows.append(
            {
                "summaries": n,
                "sequential": seq,
                "parallel": par,
                "speedup": seq["seconds"] / par["seconds"],
            }
        )

    t1 = Table(
        title=f"update-queue building (synthetic vectors, dim {args.dim}, one user, "
        f"k={args.top_k}, n={args.keep_n}, floor={args.floor})"
    )
    for col in (
        "summaries",
        "seconds",
        "non-empty queues",
        "queue entries",
        "similarities computed",
        "block MB",
    ):
        t1.add_column(col, justify="right")
    for r in queue_rows:
        t1.add_row(
            f"{r['summaries']:,}",
            f"{r['seconds']:.2f}",
            f"{r['queues']:,}",
            f"{r['entries']:,}",
            f"{r['similarities'] / 1e6:,.1f}M",
            f"{r['block_mb']:.0f}",
        )
    console.print(t1)
    t2 = Table(
        title=f"update decisions ({args.latency_ms:.0f} ms scripted latency per call, "
        f"{args.sample} queues)"
    )
    for col in ("summaries", "workers", "decisions", "seconds", "decisions/s", "speed-up"):
        t2.add_column(col, justify="right")
    for r in decision_rows:
        for run in (r["sequential"], r["parallel"]):
            t2.add_row(
                f"{r['summaries']:,}",
                str(run["workers"]),
                str(run["decisions"]),
                f"{run['seconds']:.2f}",
                f"{run['per_second']:.1f}",
                f"{r['speedup']:.2f}x" if run is r["parallel"] else "1.00x",
            )
    console.print(t2)
    if args.out:
        args.out.write_text(
            json.dumps({"queues": queue_rows, "decisions": decision_rows}, indent=2, default=str)
        )


if __name__ == "__main__":
    main()
