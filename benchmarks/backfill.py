"""Bulk backfill: single-process ingest against the backfill in-process and on 1 and 2 local
Ray workers, in one run, on LoCoMo conversations with the real MiniLM embedder (issue 31).

    python benchmarks/backfill.py [--locomo PATH] [--conversations 4] [--workers 1 2]

Each configuration writes the same conversations (user = sample id) into a fresh folder store:

* ingest: what a user does today, one `Memory.add()` per session, then `flush()`;
* backfill: `Memory.backfill(histories)`: the same write path on a private store per user, the
  commits replayed into the folder (in this process);
* ray xN: `Memory.backfill(histories, ray="local", workers=N)`: N Ray actors prepare users, the
  driver commits them as they finish.

Printed: turns/s, the ratio to `ingest`, the driver's commit seconds (its share is what caps
how many workers one store can take), and whether every configuration stored the same records
(turn, segment and summary ids). Extractive summariser, no model, no network. Ray's start-up
(a few seconds) is inside the Ray rows' time: it is part of what a backfill costs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from hymem import Memory, MemoryConfig
from hymem.api.internals import store_of
from hymem.backfill.histories import UserHistory, locomo_histories
from hymem.embed.embedders import Embedder, resolve_embedder
from hymem.evaluation.locomo_data import load_locomo
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
LOCOMO = REPO / ".." / "shared" / "data" / "locomo" / "locomo10-dev.json"


def fingerprint(mem: Memory, users: list[str]) -> tuple[int, int, int, int]:
    """(turns, segments, summaries, a hash of every id, each turn's segment and each summary's
    status): equal when two runs stored the same records."""
    keys: list[tuple[str, ...]] = []
    turns = segments = summaries = 0
    for user in users:
        held = store_of(mem).get_turns(user)
        sums = store_of(mem).get_summaries(user, statuses=None)
        seg_ids = sorted({t.segment_id for t in held if t.segment_id})
        turns, segments, summaries = (
            turns + len(held),
            segments + len(seg_ids),
            summaries + len(sums),
        )
        keys += [(t.id, t.status.value, t.segment_id or "") for t in held]
        keys += [(i,) for i in seg_ids] + sorted((s.id, s.status.value) for s in sums)
    return turns, segments, summaries, hash(tuple(keys))


def run(
    label: str, histories: list[UserHistory], embedder: Embedder, ray_workers: int | None
) -> dict[str, Any]:
    users = [h.user_id for h in histories]
    with (
        tempfile.TemporaryDirectory(prefix="backfill-") as tmp,
        Memory(f"{tmp}/m", embedder=embedder, config=MemoryConfig.defaults()) as mem,
    ):
        started = time.perf_counter()
        commit = 0.0
        if label == "ingest":
            for h in histories:
                for s in h.sessions:
                    mem.add(
                        s.messages,
                        user_id=h.user_id,
                        session_id=s.session_id,
                        timestamp=s.timestamp,
                    )
                mem.flush(user_id=h.user_id)
        else:
            report = mem.backfill(
                histories,
                ray=None if ray_workers is None else "local",
                workers=ray_workers or 1,
            )
            assert not report.failed, report.failed
            commit = report.commit_seconds
        seconds = time.perf_counter() - started
        found = fingerprint(mem, users)
    turns = sum(h.turn_count for h in histories)
    return {
        "label": label,
        "seconds": seconds,
        "rate": turns / seconds,
        "commit": commit,
        "found": found,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, default=LOCOMO)
    ap.add_argument("--conversations", type=int, default=4)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    histories = locomo_histories(load_locomo(args.locomo)[: args.conversations])
    embedder = resolve_embedder("all-MiniLM-L6-v2")
    embedder.embed(["warm up"])  # the model loads here, not inside the first row
    rows = [run("ingest", histories, embedder, None), run("backfill", histories, embedder, None)]
    for n in args.workers:
        rows.append(run(f"ray x{n}", histories, embedder, n))
    base = rows[0]
    turns = sum(h.turn_count for h in histories)
    table = Table(
        title=f"{len(histories)} LoCoMo conversations, {turns} turns, MiniLM on CPU, extractive"
    )
    for col in ("run", "seconds", "turns/s", "vs ingest", "driver commit s", "same records"):
        table.add_column(col, justify="left" if col == "run" else "right")
    for r in rows:
        table.add_row(
            r["label"],
            f"{r['seconds']:.1f}",
            f"{r['rate']:.1f}",
            f"{r['rate'] / base['rate']:.2f}x",
            f"{r['commit']:.1f}" if r["label"] != "ingest" else "-",
            "yes" if r["found"] == base["found"] else f"NO {r['found'][:3]}",
        )
    Console().print(table)
    print(f"records per run (turns, segments, summaries): {base['found'][:3]}")


if __name__ == "__main__":
    main()
