"""Traces: one row per ask with everything the dashboard needs; a failing write never fails."""

from __future__ import annotations

import json
import threading
from datetime import datetime

from tests.doubles import ScriptedRoles
from tests.fixtures_reader import make_fakes
from tests.log_events import capture_events

REQUIRED = {
    "trace_id",
    "user_id",
    "question",
    "depth",
    "path",
    "escalated",
    "escalation_reason",
    "iterations",
    "complete",
    "answer",
    "backend",
    "total_tokens",
    "total_calls",
    "latency_ms_total",
    "usage",
    "latency_ms",
    "prompt_versions",
    "fallbacks",
    "summary_ids",
    "segment_ids",
    "turn_ids",
    "rounds",
    "created_at",
    "budget_exhausted",
}


def test_trace_row_describes_the_ask() -> None:
    roles = ScriptedRoles(
        light=lambda q, c, p: ("?", False),
        select=lambda q, cands: [c.id for c in cands if c.id in {"sum2", "sum5"}],
        reflect=[(False, "follow-up"), (True, None)],
    )
    fakes = make_fakes(roles=roles)
    reader = fakes.reader()
    ans = reader.ask(fakes.params("q0", depth="auto", k=3, N=10, d=5))
    reader.flush_traces()
    (trace,) = fakes.store.read_traces()
    assert set(trace) >= REQUIRED
    assert trace["trace_id"] == ans.trace_id and trace["user_id"] == "alice"
    assert (trace["path"], trace["escalated"], trace["escalation_reason"]) == (
        "deep",
        True,
        "verdict",
    )
    assert trace["iterations"] == 2 and trace["complete"] is True
    assert trace["total_calls"] == ans.usage.total.calls == 2 * (1 + 2 + 1 + 1)
    assert trace["total_tokens"] == ans.usage.total.total_tokens
    assert trace["usage"]["select"]["calls"] == 4
    assert trace["segment_ids"] == ["seg2", "seg5"]
    assert trace["turn_ids"] == ["t2a", "t2b", "t5a", "t5b"]
    r0, r1 = trace["rounds"]
    assert r0["query"] == "q0" and r1["query"] == "follow-up"
    assert r0["summary_ids"] == ["sum0", "sum1", "sum2"]
    assert r0["candidate_ids"] == [f"sum{i}" for i in range(10)]
    assert r0["selected_ids"] == ["sum2", "sum5"] and r0["segment_ids"] == ["seg2", "seg5"]
    assert r0["new_question"] == "follow-up" and r1["reflect_complete"] is True
    assert isinstance(trace["created_at"], datetime) and trace["created_at"].tzinfo is None
    # everything but created_at is plain JSON
    json.dumps({k: v for k, v in trace.items() if k != "created_at"})


def test_failing_trace_write_does_not_fail_the_ask() -> None:
    fakes = make_fakes()
    fakes.store.fail["write_trace"] = OSError("disk full")
    reader = fakes.reader()
    with capture_events() as logs:
        ans = reader.ask(fakes.params("q"))
        reader.flush_traces()
    assert ans.text == "light"
    events = [e["event"] for e in logs]
    assert "ask.trace_failed" in events and "ask.trace" in events


def test_trace_event_is_logged_once_per_ask() -> None:
    fakes = make_fakes()
    with capture_events() as logs:
        ans = fakes.reader().ask(fakes.params("q"))
    traces = [e for e in logs if e["event"] == "ask.trace"]
    assert len(traces) == 1 and traces[0]["trace_id"] == ans.trace_id


def test_trace_rows_are_written_off_the_ask_and_drained_on_close() -> None:
    fakes = make_fakes()
    gate = threading.Event()
    written: list[str] = []

    def slow_write(trace: dict[str, object]) -> None:
        gate.wait(5)
        written.append(str(trace["trace_id"]))

    fakes.store.write_trace = slow_write  # type: ignore[method-assign]
    reader = fakes.reader()
    answers = [reader.ask(fakes.params(f"q{i}", max_iterations=0)) for i in range(3)]
    assert written == []  # the asks returned while the store was still blocked
    gate.set()
    reader.close()
    assert written == [a.trace_id for a in answers]
    late = reader.ask(fakes.params("after close", max_iterations=0))
    assert written[-1] == late.trace_id  # written inline once the writer is closed
