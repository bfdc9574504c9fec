"""Many workers on one S3 store (moto on loopback) against the local-folder store, in one run.

    cd benchmarks && python object_store.py          # 8 users x 30 turns, 1,2,4,8, 20 ms
    python object_store.py --shards 64 --servers 4   # four moto processes, routed by shard (#31)
    python object_store.py --latency-ms 0 --workers 1,2,4 --embedder minilm --out /tmp/o.json

0. Unless `--latency-ms 0`, every S3 request goes through `latency_proxy` (its own process),
   which holds it `--latency-ms` before passing it on (real S3 answers in 10-30 ms; moto on
   loopback in well under one) and counts requests by method: the capacity model
   (`object_store_model`) is built from those counts and printed beside what was measured.

1. One moto server (`tests/fixtures_s3.start_moto`, a real S3-compatible HTTP server) starts in
   this process, or with `--servers N` N of them, each its own process (`moto_servers`), the
   proxy routing each request by the shard it names (`http_router`): one moto process is one
   interpreter lock, and was the ceiling of 4 and 8 workers. Every configuration gets its own
   bucket. (moto lists a prefix by scanning
   every key of its bucket, so one shared bucket made each later configuration's listings,
   and moto's CPU per request, grow with what the earlier ones left.)
2. Ingest: `--users` users u0..u{N-1}, each `--turns` dialogue turns through `Memory.add` (one
   message per call, users interleaved, as a server sees them), then `flush` per user. With W
   workers (spawned processes, each its own `Memory` on the same s3:// URI and its own cache
   folder) the users are split across workers. Turns/s = all turns / (start barrier -> last
   worker done). Floor: the same workload on a local folder, one process (a folder has exactly
   one writer).
3. Search: once every worker is done, each calls `Memory.refresh()` (untimed) and runs
   `--searches` `Memory.search(q, user_id=..., k=10)`, alternating its own users and users
   written by other workers; p50/p95 ms next to the local store's on the same data.
4. Catch-up lag, on the 1-worker store: a read-only reader polls `search` for a marker word
   while a writer adds a burst of `--burst` turns holding it for a new user and flushes. Lag =
   the writer's flush returning -> the reader's first hit: with the default `refresh_s`, and with
   the reader calling `Memory.refresh()` before each poll.

Default embedder: `HashingEmbedder(384)` with the extractive LLM, so the figures measure storage
and coordination rather than a model; `--embedder minilm` uses all-MiniLM-L6-v2 (offline).
CPU columns: the workers' own CPU, and moto's (this process's, or the server processes')
during the ingest; the model table adds the proxy's and how many cores all of it kept busy.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
# tests.fixtures_s3 from the repository root, also in the spawned workers
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hymem import Memory, MemoryConfig
from hymem.core.errors import HymemError
from latency_proxy import Proxy, start_proxy
from moto_servers import process_cpu_s, start_servers
from object_store_model import print_model
from object_store_report import pct, report
from retrieval_data import NAMES, THINGS, VERBS, WHEN

from tests.fixtures_s3 import CLEARED_ENV, DUMMY_ENV, new_bucket, start_moto, storage_options_for

EMBEDDERS = {"hashing": "hashing:384", "minilm": "all-MiniLM-L6-v2"}
WAIT_S = 600.0  # a worker that has not reported by then has failed
POLL_S = 0.02  # the lag reader's pause between polls


@dataclass(frozen=True)
class Target:
    """Where a worker opens its Memory: a store URI, how to reach it, its own cache root."""

    uri: str
    options: dict[str, str] | None
    cache: str
    embedder: str
    refresh_s: float = 2.0
    shards: int = 1

    def open(self, *, read_only: bool = False) -> Memory:
        cfg = MemoryConfig.defaults(
            cache_dir=self.cache,
            embedder=self.embedder,
            llm="extractive",
            refresh_s=self.refresh_s,
            shards=self.shards,
        )
        return Memory(self.uri, storage_options=self.options, config=cfg, read_only=read_only)


def rng_for(text: str) -> np.random.Generator:
    """The same lines for a user in every process and run (crc32, not Python's salted hash)."""
    return np.random.default_rng(zlib.crc32(text.encode()))


def dialogue(user: str, turns: int) -> list[dict[str, str]]:
    """Short user/assistant lines from a small vocabulary, deterministic per user."""
    rng = rng_for(user)

    def pick(xs: list[str]) -> str:
        return xs[int(rng.integers(len(xs)))]

    out = []
    for i in range(turns):
        if i % 2 == 0:
            text = f"{pick(NAMES)} and I {pick(VERBS)} {pick(THINGS)} {pick(WHEN)}."
            out.append({"speaker": "User", "text": text})
        else:
            text = f"That sounds lovely. How did {pick(NAMES)} like {pick(THINGS)}?"
            out.append({"speaker": "Assistant", "text": text})
    return out


def question(user: str, n: int) -> str:
    rng = rng_for(f"{user}/q{n}")
    return f"When did I go to {THINGS[int(rng.integers(len(THINGS)))]}?"


def leak_probe() -> tuple[int, int]:
    """Open file descriptors and live threads of this process (Linux)."""
    try:
        fds = len(os.listdir("/proc/self/fd"))
    except OSError:
        fds = -1
    return fds, threading.active_count()


def ingest(mem: Memory, users: list[str], turns: int, threads: int = 1) -> dict[str, list]:
    """`ingest_users` with the users split over `threads` threads (a server answering
    several users' requests at once), the threads' timings merged."""
    if threads <= 1 or len(users) <= 1:
        return ingest_users(mem, users, turns)
    parts = [users[i::threads] for i in range(min(threads, len(users)))]
    with ThreadPoolExecutor(len(parts)) as pool:
        results = list(pool.map(lambda own: ingest_users(mem, own, turns), parts))
    return {k: [x for r in results for x in r[k]] for k in results[0]}


def ingest_users(mem: Memory, users: list[str], turns: int) -> dict[str, list]:
    """Interleaved adds, then a flush per user. A call that raises is counted and the run goes
    on, as a server would answer that request with an error and serve the next."""
    lines = {u: dialogue(u, turns) for u in users}
    out: dict[str, list] = {"add_ms": [], "flush_ms": [], "errors": []}
    calls = [(u, lines[u][t]) for t in range(turns) for u in users]
    calls += [(u, None) for u in users]
    for user, line in calls:
        t0 = time.perf_counter()
        try:
            if line is None:
                mem.flush(user_id=user)
            else:
                mem.add(line, user_id=user, session_id="s0")
        except HymemError as exc:
            out["errors"].append(f"{type(exc).__name__}: {str(exc)[:300]}")
        out["flush_ms" if line is None else "add_ms"].append((time.perf_counter() - t0) * 1000)
    return out


def timed_searches(mem: Memory, own: list[str], others: list[str], n: int) -> dict[str, list]:
    """Alternate own users and other workers' users (own only when there are no others)."""
    out: dict[str, list] = {"own": [], "other": [], "empty": [0]}
    for j in range(n):
        kind = "other" if others and j % 2 else "own"
        pool = others if kind == "other" else own
        user = pool[(j // 2) % len(pool)]
        t0 = time.perf_counter()
        hits = mem.search(question(user, j), user_id=user, k=10)
        out[kind].append((time.perf_counter() - t0) * 1000)
        out["empty"][0] += not hits
    return out


def worker(target: Target, job: dict[str, Any], gates: tuple[Any, Any], out: Any) -> None:
    """One worker process (`job`: own and others' users, turns, searches, profile path).
    A failure breaks both barriers, so the others and the parent stop at once."""
    try:
        out.put(work(target, job, gates))
    except BaseException:
        for gate in gates:
            gate.abort()
        out.put({"failed": traceback.format_exc()})
        raise


def work(target: Target, job: dict[str, Any], gates: tuple[Any, Any]) -> dict[str, Any]:
    """Open, wait for the start, ingest, wait for every worker, search, close, report."""
    start, done = gates
    own, others, profile = job["own"], job["others"], job["profile"]
    fds0, threads0 = leak_probe()
    mem = target.open()
    mem.search("warm up", user_id=own[0], k=10)  # the embedder loads here, not in the timing
    start.wait(WAIT_S)
    cpu0 = time.process_time()
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    calls = ingest(mem, own, job["turns"], job["threads"])
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    end, cpu = time.monotonic(), time.process_time() - cpu0
    done.wait(WAIT_S)
    mem.refresh()
    ms = timed_searches(mem, own, others, job["searches"])
    mem.close()
    fds1, threads1 = leak_probe()
    leaks = {"fds": fds1 - fds0, "threads": threads1 - threads0}
    return {"end": end, "cpu": cpu, "users": own, **calls, **ms, **leaks}


def run_config(
    label: str,
    target: Target,
    workers: int,
    users: list[str],
    args: argparse.Namespace,
    proxy: Proxy | None = None,
    server_cpu: Callable[[], list[float]] = lambda: [time.process_time()],
) -> dict[str, Any]:
    """Ingest and search with `workers` processes on `target`; one result row. With a
    `proxy`, the S3 requests of the ingest (start barrier to the last worker done), by method;
    `server_cpu`: the S3 servers' CPU seconds so far (by default this process's: moto's)."""
    ctx = mp.get_context("spawn")
    start, done, out = ctx.Barrier(workers + 1), ctx.Barrier(workers + 1), ctx.Queue()
    procs = []
    for w in range(workers):
        own = users[w::workers]
        job = {
            "own": own,
            "others": [u for u in users if u not in own],
            "turns": args.turns,
            "threads": args.threads,
            "searches": args.searches,
            "profile": args.profile if (args.profile and target.options and workers == 1) else None,
        }
        proc = ctx.Process(target=worker, args=(target, job, (start, done), out), name=f"w{w}")
        procs.append(proc)
    for p in procs:
        p.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a failed worker's report says why
        start.wait(WAIT_S)
    t0, cpu0 = time.monotonic(), server_cpu()
    before = proxy.requests() if proxy is not None else None
    proxy0 = process_cpu_s(proxy.process.pid) if proxy is not None else 0.0
    with contextlib.suppress(threading.BrokenBarrierError):
        done.wait(WAIT_S)  # every worker has ingested
    server_s = [after - start for after, start in zip(server_cpu(), cpu0, strict=True)]
    proxy_s = process_cpu_s(proxy.process.pid) - proxy0 if proxy is not None else 0.0
    requests = proxy.requests() if proxy is not None else None
    reports = [out.get(timeout=WAIT_S) for _ in procs]
    for p in procs:
        p.join(WAIT_S)
    failed = [r["failed"] for r in reports if "failed" in r]
    if failed:
        raise SystemExit(f"{label} x{workers}: a worker failed\n{failed[0]}")
    wall = max(r["end"] for r in reports) - t0
    own = [x for r in reports for x in r["own"]]
    other = [x for r in reports for x in r["other"]]
    adds = [x for r in reports for x in r["add_ms"]]
    errors = [e for r in reports for e in r["errors"]]
    return {
        "store": label,
        "shards": target.shards,
        "add_p50": pct(adds, 50),
        "add_p99": pct(adds, 99),
        "add_max": max(adds),
        "flush_p50": pct([x for r in reports for x in r["flush_ms"]], 50),
        "errors": len(errors),
        "error_samples": errors[:3],
        "workers": workers,
        "users": len(users),
        "turns": len(users) * args.turns,
        "ingest_s": wall,
        "turns_per_s": len(users) * args.turns / wall,
        "search_p50": pct(own + other, 50),
        "search_p95": pct(own + other, 95),
        "other_p50": pct(other, 50),
        "other_p95": pct(other, 95),
        "empty_results": sum(r["empty"][0] for r in reports),
        "worker_cpu_s": sum(r["cpu"] for r in reports),
        "moto_cpu_s": sum(server_s),
        "server_cpu_s": server_s,
        "proxy_cpu_s": proxy_s,
        "worker_wall_s": [r["end"] - t0 for r in reports],
        "worker_users": [r["users"] for r in reports],  # the same order as worker_wall_s
        "worker_cpu": [r["cpu"] for r in reports],
        "requests": None
        if requests is None or before is None
        else {k: requests[k] - before[k] for k in requests},
        "fd_delta": [r["fds"] for r in reports],
        "thread_delta": [r["threads"] for r in reports],
    }


def main() -> None:
    from object_store_lag import run_lag  # here: that module imports this one

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--searches", type=int, default=100)
    ap.add_argument("--workers", default="1,2,4,8", help="comma-separated worker counts")
    ap.add_argument(
        "--shards", default="1,16", help="comma-separated shard counts, each run per worker count"
    )
    ap.add_argument(
        "--latency-ms", type=float, default=20.0, help="added to each S3 request (0: no proxy)"
    )
    ap.add_argument(
        "--threads", type=int, default=1, help="threads per worker, each adding for its users"
    )
    ap.add_argument(
        "--servers",
        type=int,
        default=1,
        help="moto server processes, requests routed by shard (more than 1 needs the proxy)",
    )
    ap.add_argument("--embedder", choices=sorted(EMBEDDERS), default="hashing")
    ap.add_argument("--burst", type=int, default=10, help="turns per catch-up-lag burst")
    ap.add_argument("--lag-trials", type=int, default=5)
    ap.add_argument("--profile", default=None, help="cProfile the 1-worker S3 ingest here")
    ap.add_argument("--out", type=Path, default=None, help="also write the results as JSON")
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    shard_counts = [int(n) for n in args.shards.split(",")]
    os.environ.update(DUMMY_ENV)  # inherited by the workers: nothing reaches real AWS
    for name in CLEARED_ENV:
        os.environ.pop(name, None)
    embedder = EMBEDDERS[args.embedder]
    users = [f"u{i}" for i in range(args.users)]
    cluster = start_servers(args.servers) if args.servers > 1 else None
    server, endpoint = (None, cluster.endpoints[0]) if cluster else start_moto()
    routed = cluster is not None or args.latency_ms > 0
    proxy = (
        start_proxy(cluster.endpoints if cluster else endpoint, args.latency_ms) if routed else None
    )
    server_cpu = cluster.cpu_seconds if cluster else (lambda: [time.process_time()])
    try:
        opts = storage_options_for(proxy.endpoint if proxy is not None else endpoint)
        with tempfile.TemporaryDirectory(prefix="objbench-", ignore_cleanup_errors=True) as tmp:
            local = Target(f"{tmp}/local", None, f"{tmp}/cache-local", embedder)
            rows = [run_config("local folder", local, 1, users, args)]
            print(f"local folder: {rows[0]['turns_per_s']:.1f} turns/s", file=sys.stderr)
            moto = f"moto x{args.servers}" if cluster else "moto"
            label = f"s3 ({moto}, +{args.latency_ms:g} ms)" if proxy else "s3 (moto)"
            first = ""
            for n in shard_counts:
                for w in counts:
                    bucket = cluster.new_bucket() if cluster else new_bucket(endpoint).bucket
                    where, cache = f"s3://{bucket}/s{n}w{w}", f"{tmp}/cache-s{n}w{w}"
                    first = first or where
                    s3 = Target(where, opts, cache, embedder, shards=n)
                    rows.append(run_config(label, s3, w, users, args, proxy, server_cpu))
                    rate = rows[-1]["turns_per_s"]
                    print(f"s3 {n} shard(s) x{w}: {rate:.1f} turns/s", file=sys.stderr)
            lag_store = Target(first, opts, f"{tmp}/cache-lag", embedder, shards=shard_counts[0])
            lag = run_lag(lag_store, args.lag_trials, args.burst)
    finally:
        if proxy is not None:
            proxy.stop()
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.stop()
    report(rows, lag, embedder, args)
    print_model(rows, args.latency_ms)
    if args.out:
        sizes = {"users": args.users, "turns": args.turns, "searches": args.searches}
        doc = {"embedder": embedder, **sizes, "cores": os.cpu_count(), "rows": rows, "lag": lag}
        args.out.write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
