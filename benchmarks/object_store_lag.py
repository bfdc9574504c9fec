"""The catch-up lag part of `object_store.py`: a reader polling for a marker while a writer
adds and flushes a burst holding it (separate processes on one s3:// store)."""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

import numpy as np
from object_store import POLL_S, WAIT_S, Target, dialogue


def lag_reader(target: Target, cmds: Any, out: Any) -> None:
    """Poll search for each marker asked of it; report when it was first found."""
    with target.open(read_only=True) as mem:
        mem.search("warm up", user_id="u0", k=10)
        while (cmd := cmds.get(timeout=WAIT_S)) is not None:
            marker, user, forced = cmd
            out.put("polling")
            found, deadline = float("nan"), time.monotonic() + 60
            while found != found and time.monotonic() < deadline:
                if forced:
                    mem.refresh()
                if any(marker in h.text for h in mem.search(marker, user_id=user, k=10)):
                    found = time.monotonic()
                time.sleep(POLL_S)
            out.put(found)


def lag_writer(target: Target, cmds: Any, out: Any, burst: int) -> None:
    """Add a burst of turns holding the marker, flush, report when the flush returned."""
    with target.open() as mem:
        mem.search("warm up", user_id="u0", k=10)  # loads the embedder before the first burst
        while (cmd := cmds.get(timeout=WAIT_S)) is not None:
            marker, user = cmd
            t0 = time.monotonic()
            for line in dialogue(user, burst):
                mem.add({**line, "text": f"{line['text']} {marker}"}, user_id=user)
            t1 = time.monotonic()
            mem.flush(user_id=user)
            out.put((t0, t1, time.monotonic()))


def run_lag(target: Target, trials: int, burst: int) -> dict[str, Any]:
    """Lag from the writer's flush to the reader's first hit, default vs forced refresh."""
    ctx = mp.get_context("spawn")
    rq, ro, wq, wo = ctx.Queue(), ctx.Queue(), ctx.Queue(), ctx.Queue()
    reader = ctx.Process(target=lag_reader, args=(target, rq, ro), name="lag-reader")
    writer = ctx.Process(target=lag_writer, args=(target, wq, wo, burst), name="lag-writer")
    reader.start()
    writer.start()
    result: dict[str, Any] = {"refresh_s": target.refresh_s, "burst": burst}
    phase = np.random.default_rng(0)
    try:
        for forced in (False, True):
            rows: dict[str, list[float]] = {"lag_s": [], "from_flush_start_s": [], "flush_s": []}
            for trial in range(trials):
                marker = f"zorblat{int(forced)}x{trial}"
                rq.put((marker, f"lag{int(forced)}x{trial}", forced))
                assert ro.get(timeout=WAIT_S) == "polling"
                # the burst starts at a random point of the reader's refresh_s cycle
                time.sleep(float(phase.uniform(0, target.refresh_s)))
                wq.put((marker, f"lag{int(forced)}x{trial}"))
                _began, flush0, flush1 = wo.get(timeout=WAIT_S)
                found = ro.get(timeout=WAIT_S)
                rows["lag_s"].append(found - flush1)
                rows["from_flush_start_s"].append(found - flush0)
                rows["flush_s"].append(flush1 - flush0)
            result["forced" if forced else "default"] = rows
    finally:
        rq.put(None)
        wq.put(None)
        reader.join(WAIT_S)
        writer.join(WAIT_S)
    return result
