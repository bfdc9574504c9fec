"""What erasing one user costs, against the rebuild it cannot avoid, at growing store sizes.

    python benchmarks/erase.py --sizes 10000 100000

For each N the script bulk-loads N synthetic summaries spread over `--users` users into a fresh
store (`retrieval_data.bulk_fill`: the rows a store of that size holds, straight into LanceDB,
then `reindex` and `optimize` as a repaired store would), and times, on that store:

* floor: `Store.reindex()`, the Tantivy rebuild from LanceDB. Erasure must rebuild Tantivy
  (its segments keep deleted documents until merged, and tantivy-py offers no forced merge),
  so an erase can never cost less than this.
* erase: `Store.erase_user("user0")`: delete the user's rows in every table, rewrite every
  LanceDB fragment with a deleted row, prune every older version, rebuild Tantivy aside.

The ratio erase / floor says what the purge of LanceDB adds on top of the rebuild. Vectors come
from the hashing embedder at MiniLM's dimension (384): erasure never embeds, so the model does
not matter, and the fill stays fast.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("LANCEDB_LOG", "error")

from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.open import open_store
from retrieval_data import bulk_fill, sentences


def folder_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def run(n: int, users: int, root: Path) -> dict[str, float]:
    emb = HashingEmbedder(dim=384)
    rng = np.random.default_rng(0)
    base_text = sentences(3_000, rng)
    base_vec = np.asarray(emb.embed(base_text), dtype=np.float32)
    path = root / f"erase-{n}"
    store = open_store(path, embedder_name=emb.name, dim=emb.dim, dense_cache_bytes=0)
    try:
        bulk_fill(store, n, users, base_text, base_vec, rng)
        before = store.counts("user0")["summaries"]
        mb = folder_mb(path)
        t0 = time.perf_counter()
        store.reindex()
        floor = time.perf_counter() - t0
        t0 = time.perf_counter()
        removed = store.erase_user("user0")
        erase = time.perf_counter() - t0
        assert removed["summaries"] == before and store.counts("user0")["summaries"] == 0
        return {
            "n": n,
            "user_rows": before,
            "mb_before": mb,
            "mb_after": folder_mb(path),
            "floor_s": floor,
            "erase_s": erase,
        }
    finally:
        store.close()
        shutil.rmtree(path, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = ap.parse_args()
    rows = [run(n, args.users, args.dir) for n in args.sizes]
    print(
        f"\n| summaries | user's rows | folder MB before / after | floor: Tantivy rebuild s "
        f"| erase s | erase / floor |  ({args.users} users, {sys.platform})"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['user_rows']:,} | {r['mb_before']:.0f} / {r['mb_after']:.0f} "
            f"| {r['floor_s']:.2f} | {r['erase_s']:.2f} | {r['erase_s'] / r['floor_s']:.2f}x |"
        )


if __name__ == "__main__":
    main()
