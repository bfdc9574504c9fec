"""Write-path throughput against its embedding floor, on LongMemEval-S and LoCoMo histories.

For each history it measures, in one run and on one embedder instance:

* floor: MiniLM embedding every turn's text once, batched (the least any write path that keeps a
  vector per turn must spend);
* bulk: a fresh memory, one `add()` per session, then `flush()`;
* live: a fresh memory, one `add()` per turn (an agent's use), then `flush()`.

and prints turns/s and the ratio to the floor (targets: bulk >= 0.5x, live >= 0.25x), plus what
the write path produced (segments, summaries) and where its time went (embedding vs the rest,
from a counting wrapper around the embedder). Extractive backend, no model, no network.

    python benchmarks/write_path.py [--lme PATH] [--locomo PATH] [--lme-index 0] \
        [--conversation conv-26] [--modes bulk live] [--consolidation on off] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import Embedder, TokenVectors, resolve_embedder
from hymem.evaluation.locomo_data import load_locomo
from hymem.facts.slots import read_fact
from hymem.llm.tokens import count_tokens
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared" / "data"
Session = tuple[str, str, list[dict[str, Any]]]  # (session id, timestamp, messages)


class TimedEmbedder:
    """The real embedder, with the seconds and texts it spent counted."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.seconds = 0.0
        self.texts = 0
        self.token_texts = 0  # of which through the token pass (turns, added words)

    def embed(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)

    def embed_with_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        started = time.perf_counter()
        try:
            return self.inner.embed_with_tokens(texts)  # type: ignore[attr-defined]
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)
            self.token_texts += len(texts)


@dataclass
class History:
    name: str
    sessions: list[Session]

    @property
    def texts(self) -> list[str]:
        return [m["text"] for _, _, msgs in self.sessions for m in msgs]


def lme_history(path: Path, index: int) -> History:
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        q = json.load(fh)[index]
    sessions: list[Session] = []
    for sid, date, turns in zip(
        q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True
    ):
        day, _, clock = date.partition(") ")
        stamp = day.split(" (")[0].replace("/", "-") + " " + clock
        msgs = [{"speaker": t["role"], "text": t["content"]} for t in turns if t["content"].strip()]
        if msgs:
            sessions.append((sid, stamp, msgs))
    return History(f"LongMemEval-S {q['question_id']}", sessions)


def locomo_history(path: Path, sample_id: str) -> History:
    conv = next(c for c in load_locomo(path) if c.sample_id == sample_id)
    sessions = [
        (
            s.session_id,
            s.date_time.isoformat(),
            [{"speaker": t.speaker, "text": t.text} for t in s.turns if t.text.strip()],
        )
        for s in conv.sessions
    ]
    return History(f"LoCoMo {sample_id}", sessions)


@contextmanager
def fresh_memory(embedder: TimedEmbedder, consolidate: bool = True) -> Iterator[Memory]:
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(
            Path(folder) / "m",
            config=MemoryConfig(consolidate_on_write=consolidate),
            embedder=embedder,  # type: ignore[arg-type]
        ) as mem,
    ):
        yield mem


def run_mode(
    history: History, embedder: TimedEmbedder, mode: str, consolidate: bool = True
) -> dict[str, Any]:
    embedder.seconds, embedder.texts, embedder.token_texts = 0.0, 0, 0
    read_fact.cache_clear()  # each run reads its history's facts afresh, as a new process would
    count_tokens.cache_clear()
    with fresh_memory(embedder, consolidate) as mem:
        started = time.perf_counter()
        for sid, stamp, msgs in history.sessions:
            if mode == "bulk":
                mem.add(msgs, user_id="u", session_id=sid, timestamp=stamp)
            else:
                for m in msgs:
                    mem.add([m], user_id="u", session_id=sid, timestamp=stamp)
        mem.flush(user_id="u")
        seconds = time.perf_counter() - started
        stats = mem.stats(user_id="u")
    return {
        "active": stats["active_summaries"],
        "seconds": seconds,
        "embed_s": embedder.seconds,
        "embedded": embedder.texts,
        "token_pass": embedder.token_texts,
        "segments": stats["segments"],
        "summaries": stats["summaries"],
        "pending": stats["pending_turns"],
    }


def floor_seconds(history: History, embedder: TimedEmbedder) -> float:
    started = time.perf_counter()
    embedder.inner.embed(history.texts)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--lme", type=Path, default=SHARED / "longmemeval" / "longmemeval_s_dev.json.gz"
    )
    ap.add_argument("--lme-index", type=int, default=0)
    ap.add_argument("--locomo", type=Path, default=SHARED / "locomo" / "locomo10-dev.json")
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--modes", nargs="+", default=["bulk", "live"], choices=["bulk", "live"])
    ap.add_argument(
        "--consolidation",
        nargs="+",
        default=["on"],
        choices=["on", "off"],
        help="write-time consolidation (issue 30); 'on off' measures both, interleaved",
    )
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="runs of each mode and setting (the row is the median run; orders alternate)",
    )
    args = ap.parse_args()
    logging.getLogger("hymem").setLevel(logging.ERROR)
    embedder = TimedEmbedder(resolve_embedder("all-MiniLM-L6-v2"))
    embedder.inner.embed(["warm up the model"])
    histories = [
        lme_history(args.lme, args.lme_index),
        locomo_history(args.locomo, args.conversation),
    ]
    table = Table(title="Write path vs embedding floor (extractive backend, MiniLM)")
    for col in (
        "history",
        "mode",
        "turns",
        "s",
        "turns/s",
        "floor s",
        "floor turns/s",
        "ratio",
        "target",
        "embed s",
        "other s",
        "texts embedded",
        "of which token pass",
        "segments",
        "summaries",
    ):
        table.add_column(col)
    costs: list[str] = []
    for h in histories:
        n = len(h.texts)
        for mode in args.modes:
            runs: dict[str, list[tuple[float, dict[str, Any]]]] = {}
            for rep in range(args.repeats):
                # alternate the order, so a drifting machine load weighs on both settings
                order = args.consolidation if rep % 2 == 0 else args.consolidation[::-1]
                for setting in order:
                    floor = floor_seconds(h, embedder)  # same run, right before what it judges
                    r = run_mode(h, embedder, mode, consolidate=setting == "on")
                    assert r["pending"] == 0, "every turn must be stored after flush"
                    runs.setdefault(setting, []).append((floor, r))
            for setting in args.consolidation:
                floor, r = _median_run(runs[setting])
                target = 0.5 if mode == "bulk" else 0.25
                ratio = floor / r["seconds"]
                table.add_row(
                    h.name,
                    f"{mode} (consolidation {setting})",
                    str(n),
                    f"{r['seconds']:.1f}",
                    f"{n / r['seconds']:.1f}",
                    f"{floor:.1f}",
                    f"{n / floor:.1f}",
                    f"{ratio:.2f}x",
                    f">={target}x {'met' if ratio >= target else 'MISSED'}",
                    f"{r['embed_s']:.1f}",
                    f"{r['seconds'] - r['embed_s']:.1f}",
                    str(r["embedded"]),
                    str(r["token_pass"]),
                    str(r["segments"]),
                    f"{r['summaries']} ({r['active']} active)",
                )
            if {"on", "off"} <= set(runs):
                on = _median_run(runs["on"])[1]["seconds"]
                off = _median_run(runs["off"])[1]["seconds"]
                lost = 1 - off / on  # throughput lost to consolidation
                costs.append(
                    f"{h.name} {mode}: consolidation costs {lost:.0%} of the throughput "
                    f"(median of {args.repeats}: {on:.1f} s on, {off:.1f} s off; target <= 10%)"
                )
    console = Console(width=250)
    console.print(table)
    for line in costs:
        console.print(line)


def _median_run(runs: list[tuple[float, dict[str, Any]]]) -> tuple[float, dict[str, Any]]:
    """The run of median wall time (with the floor measured right before it)."""
    ordered = sorted(runs, key=lambda fr: fr[1]["seconds"])
    return ordered[(len(ordered) - 1) // 2]


if __name__ == "__main__":
    main()
