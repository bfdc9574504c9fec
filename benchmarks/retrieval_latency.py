"""Retrieval latency of `HybridSearcher.search` against its floor, at growing store sizes.

    python benchmarks/retrieval_latency.py --sizes 100000 --million    # issue 11's targets
    python benchmarks/retrieval_latency.py --sizes 1000 10000          # a quick check

For each N the script fills a fresh store with N synthetic Level-1 summaries spread over
`--users` users (one Level-2 segment per 50 summaries), calls `Store.optimize()` (which builds
the IVF_PQ index once N reaches `vector_index_min_rows`, and BTREE indexes on id/user_id), then
times `--queries` queries after `--warmup` warm-up queries, each query for one user:

* hybrid: `HybridSearcher.search(q, user_id=u, k=10)`: MiniLM query embedding, LanceDB dense
  top-20 (cosine, prefiltered by user and status), Tantivy BM25 top-20, fusion, hydration.
* floor: MiniLM query embedding + numpy brute-force cosine top-10 over the same user's vectors
  (already in memory as one float32 matrix).

The two are interleaved per query so that load from other processes hits both alike.

Synthetic data: sentences are generated from a small vocabulary (names, activities, places,
objects, months). To keep the fill fast, only `--distinct` (default 3,000) distinct sentences
are embedded with MiniLM; summary i takes distinct sentence i mod D, appends a random
"tag" word (so BM25 sees N different documents) and gets that sentence's vector plus Gaussian
noise (sigma 0.02 per dimension, then re-normalised), so no two vectors are identical and
near-duplicate clusters look like real paraphrases. Recall@10 compares the store's dense top-10
with the exact brute-force top-10 over those same vectors, twice: as served (the in-memory exact
index for a user that fits `--cache-mb`, LanceDB otherwise) and through LanceDB's own vector
search (IVF_PQ once indexed; a read-only handle with the in-memory index off), which is what a
user over the budget gets. Every user is searched once before timing, so the in-memory index
is loaded (a user's first search after a restart pays that load once). RSS is the process's
resident memory after the queries.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")

from hymem.embed.embedders import Embedder, SentenceTransformerEmbedder
from hymem.indexes.open import open_store
from hymem.indexes.protocol import RowScope
from hymem.search.hybrid import HybridSearcher
from retrieval_data import bulk_fill, fill, queries, sentences


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(xs), p))


def run_size(
    n: int,
    args: argparse.Namespace,
    emb: Embedder,
    base_text: list[str],
    base_vec: np.ndarray,
    workdir: Path,
) -> dict[str, float]:
    rng = np.random.default_rng(n)
    folder = workdir / f"store-{n}"
    store = open_store(
        folder,
        embedder_name=emb.name,
        dim=emb.dim,
        vector_index_min_rows=args.index_min_rows,
        dense_cache_bytes=args.cache_mb * 1024 * 1024,
    )
    t = time.perf_counter()
    loader = bulk_fill if n >= args.bulk_from else fill
    user_vecs = loader(store, n, args.users, base_text, base_vec, rng)
    build_s = time.perf_counter() - t
    searcher = HybridSearcher(store, emb)
    ann = open_store(
        folder, embedder_name=emb.name, dim=emb.dim, read_only=True, dense_cache_bytes=0
    )
    t = time.perf_counter()
    for user in user_vecs:  # what a first search per user pays: the in-memory index load
        searcher.search("warm up", user_id=user, k=10)
    load_s = (time.perf_counter() - t) / len(user_vecs)
    qs = queries(args.warmup + args.queries, rng)
    users = [f"user{int(rng.integers(args.users))}" for _ in qs]
    hybrid, floor, recall, recall_ann = [], [], [], []
    pairs = tqdm(list(zip(qs, users, strict=True)), desc=f"query {n:,}", leave=False)
    for i, (q, user) in enumerate(pairs):
        t = time.perf_counter()
        qv = emb.embed([q])[0]
        mat = user_vecs[user]
        top = np.argpartition(-(mat @ qv), min(10, len(mat) - 1))[:10]
        t_floor = time.perf_counter() - t
        t = time.perf_counter()
        hits = searcher.search(q, user_id=user, k=10)
        t_hybrid = time.perf_counter() - t
        if i < args.warmup:
            continue
        assert hits, f"no hits for {q!r}"
        floor.append(t_floor * 1000)
        hybrid.append(t_hybrid * 1000)
        if i < args.warmup + args.recall_queries:
            exact = {f"{user}-s{int(j) * args.users + int(user[4:])}" for j in top}
            served = {h for h, _ in store.dense_search(RowScope(user), qv, 10)}
            via_lance = {h for h, _ in ann.dense_search(RowScope(user), qv, 10)}
            recall.append(len(served & exact) / 10)
            recall_ann.append(len(via_lance & exact) / 10)
    rss = rss_mb()
    cache_mb = store.dense_cache.nbytes() / 2**20
    ann.close()
    searcher.close()
    store.close()
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "n": n,
        "build_s": build_s,
        "p50": statistics.median(hybrid),
        "p95": pct(hybrid, 95),
        "floor_p50": statistics.median(floor),
        "floor_p95": pct(floor, 95),
        "rss_mb": rss,
        "cache_mb": cache_mb,
        "load_s": load_s,
        "recall": float(np.mean(recall)) if recall else float("nan"),
        "recall_ann": float(np.mean(recall_ann)) if recall_ann else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--million", action="store_true", help="also run N = 1,000,000")
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--recall-queries", type=int, default=100)
    ap.add_argument("--distinct", type=int, default=3000)
    ap.add_argument("--index-min-rows", type=int, default=20_000)
    ap.add_argument(
        "--cache-mb", type=int, default=2048, help="in-memory dense index budget (0 = off)"
    )
    ap.add_argument(
        "--bulk-from",
        type=int,
        default=500_000,
        help="sizes from this up are bulk-loaded into LanceDB instead of committed",
    )
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    sizes = [*args.sizes, *([1_000_000] if args.million else [])]
    emb = SentenceTransformerEmbedder()
    rng = np.random.default_rng(0)
    base_text = sentences(args.distinct, rng)
    t = time.perf_counter()
    base_vec = emb.embed(base_text)
    print(
        f"embedded {len(base_text)} distinct sentences in {time.perf_counter() - t:.1f} s",
        file=sys.stderr,
    )
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="hymem-bench-"))
    rows = [run_size(n, args, emb, base_text, base_vec, workdir) for n in sizes]
    header = (
        "N",
        "build s",
        "p50 ms",
        "p95 ms",
        "floor p50",
        "floor p95",
        "p50/floor",
        "p95/floor",
        "target",
        "RSS MB",
        "in-memory index MB",
        "first search per user s",
        "recall@10 served",
        "recall@10 LanceDB IVF_PQ",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        p50r, p95r = r["p50"] / r["floor_p50"], r["p95"] / r["floor_p95"]
        met = "met" if p50r <= 1.5 and p95r <= 2.0 else "MISSED"
        print(
            f"| {r['n']:,} | {r['build_s']:.1f} | {r['p50']:.1f} | {r['p95']:.1f} | "
            f"{r['floor_p50']:.1f} | {r['floor_p95']:.1f} | {p50r:.2f} | {p95r:.2f} | "
            f"p50 ≤ 1.5x, p95 ≤ 2x: {met} | {r['rss_mb']:.0f} | {r['cache_mb']:.0f} | "
            f"{r['load_s']:.2f} | {r['recall']:.3f} | {r['recall_ann']:.3f} |"
        )
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
