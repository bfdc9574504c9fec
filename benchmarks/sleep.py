"""Sleep-time consolidation benchmark: update-queue building and parallel decisions.

Commands (options only, as before, means one-user):

    python benchmarks/sleep.py one-user --sizes 10000 100000   # one user per size, decisions
    python benchmarks/sleep.py one-user --sizes 20000 --sample 40        # a quick check
    python benchmarks/sleep.py many-users --users 100 --per-user 10000  # 1M over 100 users
    python benchmarks/sleep.py issue     # the issue's check: 100k one user (target <= 60 s),
                                         # 1M over 100 users, agreement, decision speed-up

Queue building runs on *synthetic* vectors (clusters of near-duplicates on the unit sphere, dim
384 like MiniLM), every summary of a user compared with later ones. `--method auto` is what a
sleep does: exact below 20k summaries, the approximate IVF scan above (`hymem.sleep.ivf`); its
agreement is the fraction of exact neighbours it keeps, on a sample of items whose exact queues
(one row against every later item each) are cheap to compute; the target is 0.95.
"many-users" builds each user's queues in turn, as a sleep does, and reports their total, the
per-user median and maximum, and the wall time of it all (with data generation and checks).
Timings are wall seconds and depend on the BLAS threads: on a busy machine OpenBLAS threads
contend (IVF's many medium products suffer most), so also try OPENBLAS_NUM_THREADS=1 there.
Decisions run through the real `DecisionRunner` (journal in memory) against an in-process
scripted Roles that sleeps a fixed latency per update call, like a remote model: sequential
(1 worker) versus parallel (N workers) on the same bounded sample of queues, and the measured
speed-up ratio (LightMem §3.3 claims queues are independent, so decisions parallelise).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from hymem.core.types import RoleUsage, SummaryRecord
from hymem.llm.roles import ContextItem, Role, RoleResult, UpdateOutput
from hymem.sleep.decide import Ask, DecisionRunner
from hymem.sleep.ivf import DEFAULT_NPROBE, DEFAULT_TABLES
from hymem.sleep.journal import SleepJournal
from hymem.sleep.queues import (
    METHODS,
    UpdateQueues,
    build_update_queues,
    queue_agreement,
    temporal_ranks,
)
from rich.console import Console
from rich.progress import track
from rich.table import Table

T0 = datetime(2023, 1, 1)
AGREEMENT_TARGET = 0.95


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


def ranks_for(n: int, seed: int = 1) -> np.ndarray:
    """Temporal ranks from random days (ties broken by creation order), as a sleep computes."""
    days = np.random.default_rng(seed).integers(0, 365, n)
    return temporal_ranks([(int(d), i) for i, d in enumerate(days)])


def bench_queues(n: int, args: argparse.Namespace) -> tuple[dict[str, object], UpdateQueues]:
    """One user's queues at size n: cost, method and agreement with exact on a sample."""
    v = synthetic_vectors(n, args.dim)
    ranks = ranks_for(n)
    q = build_update_queues(v, ranks, **_queue_kwargs(args))
    c = q.cost
    agree = agreement(q, v, ranks, args)
    row: dict[str, object] = {
        "summaries": n,
        "method": c.method,
        "seconds": c.seconds,
        "target_s": args.target_s,
        "meets_target": c.seconds <= args.target_s,
        "queues": c.queues,
        "entries": c.entries,
        "similarities": c.similarities,
        "block_mb": c.block_bytes / 2**20,
        "agreement": agree,
    }
    return row, q


def _queue_kwargs(args: argparse.Namespace) -> dict[str, object]:
    return {
        "top_k": args.top_k,
        "keep_n": args.keep_n,
        "floor": args.floor,
        "method": args.method,
        "nprobe": args.nprobe,
        "tables": args.tables,
    }


def agreement(
    q: UpdateQueues, v: np.ndarray, ranks: np.ndarray, args: argparse.Namespace
) -> float | None:
    """Fraction of exact neighbours kept, on `args.agreement_sample` items (None if 0)."""
    if not args.agreement_sample:
        return None
    return queue_agreement(
        q,
        v,
        ranks,
        top_k=args.top_k,
        keep_n=args.keep_n,
        floor=args.floor,
        sample=args.agreement_sample,
    )


def bench_users(args: argparse.Namespace) -> dict[str, object]:
    """`args.users` users of `args.per_user` summaries each, queues built per user as a sleep
    does (one user's snapshot at a time); agreement on the first `args.agreement_users`."""
    seconds, agrees, methods = [], [], set()
    started = time.perf_counter()
    for u in track(range(args.users), description="users", transient=True):
        v = synthetic_vectors(args.per_user, args.dim, seed=1000 + u)
        ranks = ranks_for(args.per_user, seed=2000 + u)
        q = build_update_queues(v, ranks, **_queue_kwargs(args))
        seconds.append(q.cost.seconds)
        methods.add(q.cost.method)
        if u < args.agreement_users:
            agrees.append(agreement(q, v, ranks, args))
    wall = time.perf_counter() - started
    per_user = np.asarray(seconds)
    measured = [a for a in agrees if a is not None]
    return {
        "users": args.users,
        "per_user": args.per_user,
        "summaries": args.users * args.per_user,
        "method": ",".join(sorted(methods)),
        "queue_seconds": float(per_user.sum()),
        "wall_seconds": wall,
        "p50_s": float(np.percentile(per_user, 50)),
        "max_s": float(per_user.max()),
        "agreement": min(measured) if measured else None,
    }


def sample_asks(q: UpdateQueues, n: int, sample: int) -> list[Ask]:
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
        queue = q.queue(i)
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


def decisions_for(q: UpdateQueues, n: int, args: argparse.Namespace) -> dict[str, object]:
    """Sequential versus parallel decisions on the same sample of n-summary queues."""
    asks = sample_asks(q, n, args.sample)
    seq = bench_decisions(asks, 1, args.latency_ms / 1000)
    par = bench_decisions(asks, args.workers, args.latency_ms / 1000)
    speedup = seq["seconds"] / par["seconds"] if par["seconds"] else 0.0
    return {"summaries": n, "sequential": seq, "parallel": par, "speedup": speedup}


def _verdict(ok: bool) -> str:
    return "[green]pass[/]" if ok else "[red]miss[/]"


def _agreement_cell(value: float | None, target: float) -> str:
    return "-" if value is None else f"{value:.4f} {_verdict(value >= target)}"


def queue_table(rows: list[dict[str, object]], args: argparse.Namespace) -> Table:
    t = Table(
        title=f"update-queue building, one user (synthetic vectors, dim {args.dim}, "
        f"k={args.top_k}, n={args.keep_n}, floor={args.floor}, method {args.method})"
    )
    cols = ("summaries", "method", "seconds", f"≤ {args.target_s:g} s", "non-empty queues")
    cols += ("queue entries", "similarities", "block MB", f"agreement (≥ {AGREEMENT_TARGET})")
    for col in cols:
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            f"{r['summaries']:,}",
            str(r["method"]),
            f"{r['seconds']:.2f}",
            _verdict(bool(r["meets_target"])),
            f"{r['queues']:,}",
            f"{r['entries']:,}",
            f"{float(r['similarities']) / 1e6:,.1f}M",  # type: ignore[arg-type]
            f"{r['block_mb']:.0f}",
            _agreement_cell(r["agreement"], AGREEMENT_TARGET),  # type: ignore[arg-type]
        )
    return t


def users_table(r: dict[str, object], args: argparse.Namespace) -> Table:
    t = Table(
        title=f"update-queue building, {r['users']} users × {r['per_user']:,} summaries, "
        f"one user at a time (method {args.method})"
    )
    cols = ("summaries", "method", "queue s (sum)", "wall s (all)")
    cols += ("per-user p50 s", "per-user max s", f"max ≤ {args.target_s:g} s")
    cols += (f"agreement (min, {min(args.agreement_users, args.users)} users)",)
    for col in cols:
        t.add_column(col, justify="right")
    t.add_row(
        f"{r['summaries']:,}",
        str(r["method"]),
        f"{r['queue_seconds']:.1f}",
        f"{r['wall_seconds']:.1f}",
        f"{r['p50_s']:.3f}",
        f"{r['max_s']:.3f}",
        _verdict(float(r["max_s"]) <= args.target_s),  # type: ignore[arg-type]
        _agreement_cell(r["agreement"], AGREEMENT_TARGET),  # type: ignore[arg-type]
    )
    return t


def decision_table(rows: list[dict[str, object]], args: argparse.Namespace) -> Table:
    t = Table(
        title=f"update decisions ({args.latency_ms:.0f} ms scripted latency per call, "
        f"{args.sample} queues)"
    )
    for col in ("summaries", "workers", "decisions", "seconds", "decisions/s", "speed-up"):
        t.add_column(col, justify="right")
    for r in rows:
        for run in (r["sequential"], r["parallel"]):
            t.add_row(
                f"{r['summaries']:,}",
                str(run["workers"]),  # type: ignore[index]
                str(run["decisions"]),  # type: ignore[index]
                f"{run['seconds']:.2f}",  # type: ignore[index]
                f"{run['per_second']:.1f}",  # type: ignore[index]
                f"{r['speedup']:.2f}x" if run is r["parallel"] else "1.00x",
            )
    return t


def run(args: argparse.Namespace, console: Console) -> dict[str, object]:
    """Run the chosen command, printing its tables; returns the results for --out."""
    results: dict[str, object] = {"command": args.command}
    if args.command in ("one-user", "issue"):
        queue_rows, decision_rows = [], []
        for n in args.sizes:
            with console.status(f"building update queues for {n:,} summaries"):
                row, q = bench_queues(n, args)
            queue_rows.append(row)
            if args.sample:
                decision_rows.append(decisions_for(q, n, args))
        console.print(queue_table(queue_rows, args))
        if decision_rows:
            console.print(decision_table(decision_rows, args))
        results |= {"queues": queue_rows, "decisions": decision_rows}
    if args.command in ("many-users", "issue"):
        users = bench_users(args)
        console.print(users_table(users, args))
        results["users"] = users
    return results


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    q = common.add_argument_group("queues")
    q.add_argument("--dim", type=int, default=384)
    q.add_argument("--top-k", type=int, default=20)
    q.add_argument("--keep-n", type=int, default=10)
    q.add_argument("--floor", type=float, default=0.6)
    q.add_argument("--method", choices=METHODS, default="auto", help="auto: as a sleep does")
    q.add_argument("--nprobe", type=int, default=DEFAULT_NPROBE, help="ivf probes per table")
    q.add_argument("--tables", type=int, default=DEFAULT_TABLES, help="ivf partitions")
    q.add_argument(
        "--agreement-sample",
        type=int,
        default=500,
        help="items whose exact queues are compared (0: skip)",
    )
    q.add_argument("--target-s", type=float, default=60.0, help="seconds allowed per user")
    d = common.add_argument_group("decisions")
    d.add_argument("--latency-ms", type=float, default=50.0)
    d.add_argument("--sample", type=int, default=200, help="queues decided per size (0: skip)")
    d.add_argument("--workers", type=int, default=8)
    common.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    return common


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv.insert(0, "one-user")  # the old interface: options only
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = _common_options()
    one = sub.add_parser(
        "one-user", parents=[common], help="one user at each of --sizes, then decisions"
    )
    one.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    many = sub.add_parser("many-users", parents=[common], help="1M over 100 users by default")
    issue = sub.add_parser(
        "issue", parents=[common], help="the issue's check: 100k one user, 1M over 100 users"
    )
    issue.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    for p in (many, issue):
        p.add_argument("--users", type=int, default=100)
        p.add_argument("--per-user", type=int, default=10_000)
        p.add_argument("--agreement-users", type=int, default=3, help="users checked vs exact")
    return ap.parse_args(argv)


def main() -> None:
    args = parse_args()
    console = Console(width=140)
    results = run(args, console)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
