"""What a worker's lexical replica (`indexes/lexical/replica.py`) costs to build and to keep
caught up.

    python benchmarks/replica_catchup.py --rows 100000

Fills a summaries table with `--rows` synthetic rows (MiniLM's 384-d vectors, `--users` users,
`--fragments` commits) through one LanceDB connection, then times a replica on a second one:

* floor: what `LexicalSync.rebuild` does today (every row read, Tantivy rebuilt), same rows;
* cold: the first catch-up on an empty cache (reads every row, builds Tantivy, writes state);
* restart: a new replica on the same cache, first catch-up with nothing new (loads and checks
  the state), then nothing-new catch-ups (manifest reads only; median of `--repeat`);
* append: one commit of 10 rows; delete: 10 rows out of one large fragment; status: 10 rows
  changed by merge_insert; compact: every fragment rewritten into one (rows moved, not changed).

It prints the state's size on disk (JSON and Arrow key files).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import sql as F
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.replica import CatchUp, LexicalReplica
from hymem.indexes.lexical.sync import SUMMARY_LEX_COLS, summary_doc
from retrieval_data import sentences

DIM = 384


def rows(start: int, n: int, users: int, rng: np.random.Generator) -> pa.Table:
    t0 = datetime(2023, 1, 1)
    schema = S.summaries_schema(DIM)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    cols = {
        "id": [f"s{start + i}" for i in range(n)],
        "user_id": [f"user{(start + i) % users}" for i in range(n)],
        "segment_id": [f"g{start + i}" for i in range(n)],
        "text": sentences(n, rng),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), DIM),
        "time_start": [t0 + timedelta(minutes=start + i) for i in range(n)],
        "status": ["active"] * n,
        "version": [1] * n,
        "origin": ["summary"] * n,
        "created_at": [t0] * n,
        "updated_at": [t0] * n,
        "attribution": ["segment"] * n,
        "context": [""] * n,
        "metadata": ["{}"] * n,
    }
    return pa.table(
        {
            f.name: pa.array(cols[f.name], f.type) if f.name in cols else pa.nulls(n, f.type)
            for f in schema
        },
        schema=schema,
    )


def timed(label: str, fn: Callable[[], CatchUp]) -> CatchUp:
    t = time.perf_counter()
    out = fn()
    ms = (time.perf_counter() - t) * 1000
    print(
        f"{label:<28} {ms:9.1f} ms  upserted={out.upserted} deleted={out.deleted} "
        f"rows_read={out.rows_read} rebuilt={out.rebuilt}"
    )
    return out


def median_ms(fn: Callable[[], CatchUp], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.iterdir())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--fragments", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    root = Path(tempfile.mkdtemp(prefix="replica-bench-"))
    writer = LanceTables(root / "db", read_only=False)
    writer.ensure(S.SUMMARIES, S.summaries_schema(DIM))
    writer.ensure(S.SEGMENTS, S.segments_schema(DIM))
    per = args.rows // args.fragments
    for f in range(args.fragments):
        writer.add(S.SUMMARIES, rows(f * per, per, args.users, rng))
    print(f"{args.rows:,} summaries in {args.fragments} fragments, {args.users} users, at {root}")

    floor = LexicalIndex(root / "floor", writable=True)
    t = time.perf_counter()
    floor.rebuild(
        summary_doc(r)
        for batch in writer.batches(S.SUMMARIES, None, SUMMARY_LEX_COLS, 10_000)
        for r in batch.to_pylist()
    )
    print(f"{'floor: full rebuild':<28} {(time.perf_counter() - t) * 1000:9.1f} ms")

    state = root / "cache" / "replica.json"
    lex = LexicalIndex(root / "cache" / "lexical", writable=True)
    rep = LexicalReplica(LanceTables(root / "db", read_only=True), lex, state)
    timed("cold full build", rep.catch_up)
    keys = state.with_name(state.name + ".keys")
    print(f"state: {size(state):,} B JSON + {size(keys):,} B key files")
    lex.close()  # a restarted worker
    lex = LexicalIndex(root / "cache" / "lexical", writable=True)
    rep = LexicalReplica(LanceTables(root / "db", read_only=True), lex, state)
    timed("restart, nothing new", rep.catch_up)
    print(f"{'nothing new (median)':<28} {median_ms(rep.catch_up, args.repeat):9.1f} ms")
    writer.add(S.SUMMARIES, rows(args.rows, 10, args.users, rng))
    timed("1 commit appended (10 rows)", rep.catch_up)
    writer.delete(S.SUMMARIES, F.user_ids("user1", [f"s{i * 100 + 1}" for i in range(10)]))
    timed("10 rows deleted", rep.catch_up)
    changed = writer.query(S.SUMMARIES, F.user_ids("user2", [f"s{i * 100 + 2}" for i in range(10)]))
    changed = changed.set_column(
        changed.schema.get_field_index("status"), "status", pa.array(["superseded"] * 10)
    )
    writer.upsert(S.SUMMARIES, changed, on=["user_id", "id"])
    timed("10 status changes", rep.catch_up)
    writer.compact(S.SUMMARIES, scalar_columns=[])
    timed("compaction (all moved)", rep.catch_up)
    print(f"state after compaction: {size(state):,} B JSON + {size(keys):,} B key files")


if __name__ == "__main__":
    main()
