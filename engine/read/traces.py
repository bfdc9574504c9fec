"""Per-ask traces (ARCHITECTURE §8): one row per ask in the `traces` table plus one structlog
event `ask.trace`. The dashboard and evaluation read them back with `Memory.traces()`.

Each ask's trace is built once, typed (`hymem.read.trace_record.Trace`), and stays typed until
the store takes it as a row (`Trace.row`): every value plain JSON (str, int, float, bool, None,
lists and dicts of those) except `created_at`, a naive UTC datetime the store filters on.
Writing a trace is best effort: a failure is logged as `ask.trace_failed` and never fails the
ask it describes. Rows are written by a `TraceWriter` thread so the LanceDB append stays off
the ask's latency.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import asdict
from typing import TYPE_CHECKING

from hymem.core.errors import HymemError
from hymem.core.logging import get_logger
from hymem.core.time import Clock, utcnow
from hymem.core.types import Answer
from hymem.read.trace_record import Trace, TraceRound

if TYPE_CHECKING:
    from hymem.indexes.ports import TraceLog
    from hymem.read.budget import Budget
    from hymem.read.run import Run
    from hymem.read.scheduler import ScheduleResult

log = get_logger("hymem.read.traces")

# What a trace write may raise and we deliberately absorb: hymem's own store errors (closed,
# read-only), the filesystem, and Arrow/LanceDB conversion errors (ValueError/TypeError
# subclasses) and runtime failures. Anything else is a bug and propagates.
TRACE_WRITE_ERRORS: tuple[type[BaseException], ...] = (
    HymemError,
    OSError,
    RuntimeError,
    ValueError,
    TypeError,
    LookupError,
)


def build_trace(
    answer: Answer | None,
    *,
    run: Run,
    trace_id: str,
    question: str,
    user_id: str,
    depth: str,
    budget: Budget,
    plan: dict[str, int | str] | None = None,
    schedule: ScheduleResult | None = None,
    error: BaseException | None = None,
    clock: Clock = utcnow,
) -> Trace:
    """The trace of one ask; `answer` is None when the ask failed with `error`."""
    usage = run.usage
    total = usage.total
    rounds = _round_rows(run, schedule)
    final = run.rounds[max(run.rounds)] if run.rounds else None
    evidence = answer.evidence if answer is not None else []
    return Trace.model_validate(
        {
            "trace_id": trace_id,
            "user_id": user_id,
            "question": question,
            "depth": depth,
            "plan": plan,  # the sizes it read with (k, N, d, T): what a replay asks with again
            "path": answer.path if answer else None,
            "escalated": answer.escalated if answer else any(r.escalated for r in rounds),
            "escalation_reason": answer.escalation_reason if answer else None,
            "iterations": answer.iterations if answer else len(rounds),
            "complete": answer.complete if answer else False,
            "answer": answer.text if answer else "",
            "backend": run.roles.label,
            "total_tokens": total.total_tokens,
            "total_calls": total.calls,
            "latency_ms_total": run.latency.get("total", 0.0),
            "usage": {role: u.model_dump() for role, u in usage.roles.items()},
            "latency_ms": dict(run.latency),
            "prompt_versions": dict(run.versions),
            "fallbacks": list(run.fallbacks),
            "fallback": run.fallback,  # "light" / "extractive": what answered for a failed model
            "notes": list(run.notes),
            "budget_exhausted": budget.exhausted,
            "budget_stops": list(budget.stops),
            "filters": dict(run.filters.source) if run.filters is not None else None,
            "summary_ids": [h.id for h in evidence if h.level == "summary"]
            or (final.summary_ids if final else []),
            "segment_ids": [h.id for h in evidence if h.level == "segment"],
            "turn_ids": [t for h in evidence for t in h.turn_ids],
            "rounds": rounds,
            "error": f"{type(error).__name__}: {error}" if error is not None else None,
            "as_of": run.as_of,
            "created_at": clock(),
        }
    )


def _round_rows(run: Run, schedule: ScheduleResult | None) -> list[TraceRound]:
    """One record per round the run reached: the ids it retrieved and read, plus what the
    scheduler recorded about it (unset when the ask failed before the scheduler returned)."""
    records = {r.index: r for r in schedule.rounds} if schedule is not None else {}
    rows: list[TraceRound] = []
    for index in sorted(run.rounds):
        rec = records.get(index)
        done = asdict(rec) if rec is not None else {}
        rows.append(TraceRound.model_validate({"index": index, **run.rounds[index].ids(), **done}))
    return rows


def write_trace(store: TraceLog, trace: Trace) -> float:
    """Write the row now; returns the write's latency in ms. Never raises for a failing store:
    the ask it describes has already succeeded (or failed on its own)."""
    start = time.perf_counter()
    try:
        store.write_trace(trace.row())
    except TRACE_WRITE_ERRORS as exc:
        log.warning("ask.trace_failed", trace_id=trace.trace_id, error=repr(exc))
    return (time.perf_counter() - start) * 1000.0


def log_trace(trace: Trace) -> None:
    """The one structlog event per ask: the trace's flat fields, rounds counted."""
    fields = trace.model_dump(mode="json", exclude_unset=True, exclude={"rounds", "created_at"})
    log.info(
        "ask.trace",
        **fields,
        created_at=trace.created_at.isoformat(),
        rounds=len(trace.rounds),
    )


class TraceWriter:
    """Writes trace rows on one background thread, off the ask's critical path.

    A single-row LanceDB append costs ~5-30 ms, as much as the whole light-path retrieval, so
    an ask only enqueues its row. `flush()` waits for every queued row (Memory.traces() and
    close() call it), so readers of traces still see every finished ask. Rows queued when the
    process dies without close() are lost: traces are observability, never memory data.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[TraceLog, Trace] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, store: TraceLog, trace: Trace) -> None:
        with self._lock:
            if self._closed:  # late ask racing close(): write inline rather than drop
                write_trace(store, trace)
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="hymem-traces", daemon=True)
                self._thread.start()
            self._queue.put((store, trace))

    def flush(self) -> None:
        """Block until every submitted row has been written (or its failure logged)."""
        self._queue.join()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                write_trace(*item)
            finally:
                self._queue.task_done()
