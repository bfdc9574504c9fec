"""The capacity model `object_store.py` prints beside what it measured (issue 31).

From the run: the S3 requests each add cost (counted by `latency_proxy`, flushes included),
one worker's add rate, and the best ingest rate any worker count reached on the one set of
tables every worker commits to today. From AWS: a prefix sustains 3,500 write requests
(PUT/COPY/POST/DELETE) and 5,500 read requests (GET/HEAD) per second ("Best practices design
patterns: optimizing Amazon S3 performance"); S3 scales a busy prefix up to that, not past it.

    adds/s (N workers, S shards) ~= min(N x one worker's rate,
                                        S x one table set's commit ceiling,
                                        S x the prefix's request rates / requests per add)

The one-table-set ceiling is the best rate measured with one shard; the rows measured with S
shards are printed beside the model's figure for them, so the assumption that each shard
commits independently at that ceiling is checked in the same run. Users hash to shards, so a
few users over many shards leave some shards empty and some with two users: the model's S is
the number of shards that hold a worker's users, at most min(S, users).
"""

from __future__ import annotations

import math
import os
from typing import Any

PREFIX_WRITES_PER_S = 3500
PREFIX_READS_PER_S = 5500
TARGET_ADDS_PER_S = 1000


def per_add(row: dict[str, Any]) -> tuple[float, float] | None:
    """(reads, writes) requests per add of a measured row, or None without a proxy."""
    req = row.get("requests")
    if not req or not row["turns"]:
        return None
    reads = req["GET"] + req["HEAD"]
    writes = req["PUT"] + req["POST"] + req["DELETE"]
    return reads / row["turns"], writes / row["turns"]


def prefix_rate(reads: float, writes: float) -> float:
    """Adds/s one prefix allows at these requests per add."""
    return min(PREFIX_READS_PER_S / max(reads, 1e-9), PREFIX_WRITES_PER_S / max(writes, 1e-9))


def server_ceiling(row: dict[str, Any]) -> tuple[float, float]:
    """(the busiest moto process's share of the ingest, the adds/s at which it would use a
    whole core: the test server's ceiling, whatever hymem does)."""
    busiest = max(row.get("server_cpu_s") or [row["moto_cpu_s"]])
    if not row["turns"] or busiest <= 0:
        return float("nan"), float("nan")
    busy = busiest / row["ingest_s"]
    return busy, row["turns_per_s"] / busy


def capacity(
    one_worker: float, ceiling: float, reads: float, writes: float, workers: int, shards: int
) -> float:
    return min(workers * one_worker, shards * ceiling, shards * prefix_rate(reads, writes))


def print_model(rows: list[dict[str, Any]], latency_ms: float) -> None:
    s3 = [r for r in rows if r["store"].startswith("s3") and per_add(r) is not None]
    if not s3:
        print("\n(no request counts: run with --latency-ms > 0 for the capacity model)")
        return
    print(f"\nWhere each worker's ingest time went (+{latency_ms:g} ms per S3 request):")
    print(
        "| shards | workers | turns/s | vs 1 worker | reads / writes per add | worker CPU share "
        "| waiting | moto busy | moto's ceiling adds/s | cores busy | model adds/s |"
    )
    print("| --- " * 11 + "|")
    unsharded = [r for r in s3 if r.get("shards", 1) == 1] or s3
    one = next((r for r in unsharded if r["workers"] == 1), unsharded[0])
    reads, writes = per_add(one) or (0.0, 0.0)
    one_rate = one["turns_per_s"] / one["workers"]
    ceiling = max(r["turns_per_s"] for r in unsharded)
    for r in s3:
        shards = r.get("shards", 1)
        base = next((b for b in s3 if b.get("shards", 1) == shards and b["workers"] == 1), r)
        r_reads, r_writes = per_add(r) or (0.0, 0.0)
        walls, cpus = r["worker_wall_s"], r["worker_cpu"]
        share = sum(cpus) / max(sum(walls), 1e-9)
        held = min(shards, r["users"]) if "users" in r else shards
        model = capacity(one_rate, ceiling, reads, writes, r["workers"], held)
        busy, server = server_ceiling(r)
        # everything on this machine: the workers, every moto process, the latency proxy
        cores = (sum(cpus) + r["moto_cpu_s"] + r.get("proxy_cpu_s", 0.0)) / r["ingest_s"]
        print(
            f"| {shards} | {r['workers']} | {r['turns_per_s']:.1f} "
            f"| {r['turns_per_s'] / base['turns_per_s']:.2f}x | {r_reads:.1f} / {r_writes:.1f} "
            f"| {share:.0%} | {1 - share:.0%} | {busy:.0%} | {server:.1f} "
            f"| {cores:.2f} of {os.cpu_count()} | {model:.1f} |"
        )
    print(
        "moto busy: the busiest moto process's CPU seconds over the ingest's wall time. Each"
        " moto process uses one core at most (its GIL); its ceiling is the rate at which that"
        " process would be busy all the time (turns/s / busy). A row at that ceiling measured"
        " the test server, not hymem. cores busy: the workers', moto's and the latency"
        " proxy's CPU seconds together over the ingest's wall time."
    )
    trips = one["add_p50"] / latency_ms if latency_ms > 0 else float("nan")
    print(
        f"\nCapacity model: one worker {one_rate:.1f} adds/s (add p50 {one['add_p50']:.0f} ms, "
        f"~{trips:.0f} request latencies in a row); one table set's ceiling, the best rate "
        f"measured: {ceiling:.1f} adds/s; {reads:.1f} reads and {writes:.1f} writes per add, "
        f"so a prefix allows {PREFIX_READS_PER_S / reads:.0f} (reads) and "
        f"{PREFIX_WRITES_PER_S / writes:.0f} (writes) adds/s."
    )
    print("| adds/s sustained | 1 worker | 4 | 8 | 64 | 512 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for shards in (1, 4, 16, 64):
        cells = [
            f"{capacity(one_rate, ceiling, reads, writes, n, shards):.0f}"
            for n in (1, 4, 8, 64, 512)
        ]
        label = f"{shards} shard{'s' if shards > 1 else ''}"
        print(f"| {label} | " + " | ".join(cells) + " |")
    shards = math.ceil(TARGET_ADDS_PER_S / min(ceiling, prefix_rate(reads, writes)))
    workers = math.ceil(TARGET_ADDS_PER_S / one_rate)
    print(
        f"{TARGET_ADDS_PER_S:,} adds/s needs >= {shards} shards and >= {workers} workers "
        "at one add per commit (see the rows above for how far measured S > 1 agrees)."
    )


__all__ = ["capacity", "per_add", "prefix_rate", "print_model", "server_ceiling"]
