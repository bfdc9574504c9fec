"""The REST server under concurrent clients, against the library it wraps, in one run.

    python benchmarks/serve.py                              # 8 clients for 30 s
    python benchmarks/serve.py --clients 4 --seconds 10     # a quick run

1. A store is filled through the write path (extractive backend, MiniLM): `--users` users with
   `--turns` turns each, from the synthetic vocabulary of `retrieval_data`.
2. Library floor: `Memory.search(q, user_id=u, k=10)` in this process, `--queries` queries
   after a warm-up (MiniLM query embedding + hybrid retrieval), single caller.
3. The memory is closed and `hymem serve` started on 127.0.0.1 (a free port) over the same
   folder; the same queries go one at a time through httpx: search p50 over HTTP against the
   library's (target: at most 1.5x).
4. Load: `--clients` threads (bounded: at most 64) for `--seconds` (at most 300), each looping
   over a realistic mix: 70 % search, 20 % add of one message, 10 % ask(depth="light"), each for
   a random user. Reported: throughput, p50/p95 per route, errors (target: zero).

Loopback only; the server is one process, the store's single writer.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

from hymem import Memory, MemoryConfig
from retrieval_data import queries, sentences

MAX_CLIENTS, MAX_SECONDS = 64, 300
KEY = "bench-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def fill(folder: Path, users: int, turns: int, rng: np.random.Generator) -> None:
    with Memory(folder, config=MemoryConfig(llm="extractive")) as mem:
        for u in range(users):
            said = sentences(turns, rng)
            for i in range(0, turns, 10):
                msgs = [{"speaker": "User", "text": t} for t in said[i : i + 10]]
                mem.add(msgs, user_id=f"user{u}", session_id=f"s{i // 50}")
            mem.flush(user_id=f"user{u}")


def library_p50(folder: Path, qs: list[str], users: int) -> list[float]:
    with Memory(folder, config=MemoryConfig(llm="extractive")) as mem:
        for q in qs[:10]:
            mem.search(q, user_id="user0", k=10)
        out = []
        for i, q in enumerate(qs):
            t0 = time.perf_counter()
            mem.search(q, user_id=f"user{i % users}", k=10)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HYMEM_API_KEYS": f"{KEY}=*"}
    cmd = [sys.executable, "-m", "hymem.cli", "serve", "--store", str(folder)]
    proc = subprocess.Popen([*cmd, "--port", str(port), "--llm", "extractive"], env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def http_p50(url: str, qs: list[str], users: int) -> list[float]:
    out = []
    with httpx.Client(base_url=url, headers=HEADERS, timeout=60) as http:
        for q in qs[:10]:
            http.post("/v1/search", json={"user_id": "user0", "query": q})
        for i, q in enumerate(qs):
            t0 = time.perf_counter()
            res = http.post("/v1/search", json={"user_id": f"user{i % users}", "query": q})
            out.append((time.perf_counter() - t0) * 1000)
            res.raise_for_status()
    return out


def client(url: str, users: int, until: float, seed: int, out: dict, lock: threading.Lock) -> None:
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    qs, said = queries(200, np_rng), sentences(200, np_rng)
    with httpx.Client(base_url=url, headers=HEADERS, timeout=120) as http:
        while time.perf_counter() < until:
            user, roll = f"user{rng.randrange(users)}", rng.random()
            if roll < 0.7:
                route, body = "/v1/search", {"user_id": user, "query": rng.choice(qs)}
            elif roll < 0.9:
                route, body = "/v1/memories", {"user_id": user, "messages": rng.choice(said)}
            else:
                route = "/v1/ask"
                body = {"user_id": user, "question": rng.choice(qs), "depth": "light"}
            t0 = time.perf_counter()
            try:
                ok = http.post(route, json=body).status_code == 200
            except httpx.HTTPError:
                ok = False
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                out.setdefault(route, {"ms": [], "errors": 0})
                out[route]["ms"].append(ms)
                out[route]["errors"] += not ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args()
    clients, seconds = min(args.clients, MAX_CLIENTS), min(args.seconds, MAX_SECONDS)
    rng = np.random.default_rng(0)
    with TemporaryDirectory() as tmp:
        folder = Path(tmp) / "mem"
        t0 = time.perf_counter()
        fill(folder, args.users, args.turns, rng)
        print(f"filled {args.users} users x {args.turns} turns in {time.perf_counter() - t0:.0f} s")
        qs = queries(args.queries, rng)
        lib = library_p50(folder, qs, args.users)
        proc, url = start_server(folder)
        try:
            one = http_p50(url, qs, args.users)
            out: dict = {}
            lock = threading.Lock()
            until = time.perf_counter() + seconds
            threads = [
                threading.Thread(target=client, args=(url, args.users, until, s, out, lock))
                for s in range(clients)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            proc.terminate()
            proc.wait(60)
    report(lib, one, out, clients, seconds)


def report(lib: list[float], one: list[float], out: dict, clients: int, seconds: float) -> None:
    ratio = statistics.median(one) / statistics.median(lib)
    verdict = "met" if ratio <= 1.5 else "MISSED"
    print("\n| search, one caller | p50 ms | p95 ms |")
    print("| --- | --- | --- |")
    print(f"| library `Memory.search` (floor) | {pct(lib, 50):.1f} | {pct(lib, 95):.1f} |")
    print(f"| HTTP `POST /v1/search` | {pct(one, 50):.1f} | {pct(one, 95):.1f} |")
    print(f"\nHTTP / library p50: **{ratio:.2f}x** (target <= 1.5x: {verdict})")
    total = sum(len(v["ms"]) for v in out.values())
    errors = sum(v["errors"] for v in out.values())
    print(
        f"\n{clients} clients, {seconds:.0f} s: {total / seconds:.1f} requests/s, {errors} errors"
    )
    print("\n| route | requests | p50 ms | p95 ms | errors |")
    print("| --- | --- | --- | --- | --- |")
    for route, v in sorted(out.items()):
        p50, p95 = pct(v["ms"], 50), pct(v["ms"], 95)
        print(f"| {route} | {len(v['ms'])} | {p50:.1f} | {p95:.1f} | {v['errors']} |")


if __name__ == "__main__":
    main()
