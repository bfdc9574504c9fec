"""The dashboard's numbers from traces and predictions (pure)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hymem import Trace
from hymem.evaluation.dashboard_data import (
    accuracy_by_path,
    escalation_by,
    escalation_by_order,
    escalation_by_round,
    escalation_rate,
    event_from_prediction,
    event_from_trace,
    key_numbers,
    question_positions,
    traces_in_order,
)


def trace(path: str | None, escalated: bool, iterations: int, minute: int, **kw: object) -> Trace:
    return Trace.model_validate(
        {
            "trace_id": f"t{minute}",
            "user_id": "u",
            "path": path,
            "escalated": escalated,
            "iterations": iterations,
            "created_at": datetime(2024, 1, 1, 12, minute),
            **kw,
        }
    )


def test_trace_without_totals_sums_usage_and_latency_and_reads_extras() -> None:
    e = event_from_trace(
        trace(
            "deep",
            True,
            2,
            0,
            usage=json.dumps(
                {
                    "roles": {
                        "light_answer": {"prompt_tokens": 10, "completion_tokens": 2},
                        "deep_answer": {"prompt_tokens": 100, "completion_tokens": 5},
                    }
                }
            ),
            latency_ms={"light": 5.0, "deep": 20.0},
            category=2,
        )
    )
    assert (e.path, e.escalated, e.iterations, e.tokens, e.latency_ms) == (
        "deep",
        True,
        2,
        117,
        25.0,
    )
    assert e.category == "temporal"
    e2 = event_from_trace(trace(None, False, 0, 1, latency_ms={"total": 7, "light": 3}))
    assert e2.path == "none" and e2.latency_ms == 7.0 and e2.category is None
    e3 = event_from_trace(trace("light", False, 1, 2, total_tokens=9, latency_ms_total=4.5))
    assert (e3.tokens, e3.latency_ms, e3.time) == (9, 4.5, datetime(2024, 1, 1, 12, 2))


def test_escalation_rate_overall_by_category_by_iteration() -> None:
    events = [
        event_from_prediction(
            {
                "path": "light",
                "escalated": False,
                "iterations": 1,
                "category": 4,
                "f1": 1.0,
                "judge_correct": True,
            },
            "r/h",
        ),
        event_from_prediction(
            {
                "path": "deep",
                "escalated": True,
                "iterations": 1,
                "category": 4,
                "f1": 0.5,
                "judge_correct": False,
            },
            "r/h",
        ),
        event_from_prediction(
            {"path": "deep", "escalated": True, "iterations": 2, "category": 2, "f1": 0.0}, "r/h"
        ),
        event_from_prediction(
            {"path": "none", "escalated": False, "category": 2, "f1": 1.0}, "r/full"
        ),
    ]
    assert escalation_rate(events) == pytest.approx(2 / 3)  # the path-less baseline is left out
    assert escalation_by(events, "category") == {"single_hop": (0.5, 2), "temporal": (1.0, 1)}
    assert escalation_by(events, "iterations") == {"1": (0.5, 2), "2": (1.0, 1)}
    assert escalation_by_round(events) == {}  # no per-round detail without traces
    acc = accuracy_by_path(events)
    assert acc["light"] == {"n": 1, "f1": 1.0, "judge": 1.0}
    assert acc["deep"]["f1"] == 0.25 and acc["deep"]["judge"] == 0.0
    nums = key_numbers(events[:3])
    assert nums["questions"] == 3 and nums["light_f1"] == 1.0 and nums["deep_f1"] == 0.25


def test_escalation_by_order_windows_questions_not_clock_time() -> None:
    # Finished in reverse order (as worker threads may): the windows follow question order.
    events = [
        event_from_prediction(
            {
                "path": "deep" if q > 2 else "light",
                "escalated": q > 2,
                "finished_at": f"2024-01-01T12:0{9 - q}:00",
            },
            "r/h",
            order=q,
        )
        for q in (4, 3, 2, 1)
    ]
    assert escalation_by_order(events, buckets=2) == [(1, 2, 0.0, 2), (3, 4, 1.0, 2)]
    assert escalation_by_order([]) == []


def test_store_traces_are_numbered_by_arrival() -> None:
    traces = [trace("deep" if m % 2 else "light", bool(m % 2), 1, m) for m in (3, 0, 1, 2)]
    events = traces_in_order(traces)
    assert [e.order for e in events] == [4, 1, 2, 3]
    assert escalation_by_order(events, buckets=2) == [(1, 2, 0.5, 2), (3, 4, 0.5, 2)]
    assert question_positions([("c2", 1), ("c1", 5), ("c2", 1)]) == {("c1", 5): 1, ("c2", 1): 2}


def test_escalation_by_round_from_trace_rounds() -> None:
    t1 = trace(
        "deep",
        True,
        2,
        0,
        rounds=[{"index": 1, "escalated": False}, {"index": 0, "escalated": True}],
    )
    t2 = trace("light", False, 1, 1, rounds=json.dumps([{"index": 0, "escalated": False}]))
    pred = event_from_prediction({"path": "deep", "escalated": True, "iterations": 1}, "r", t2)
    events = [event_from_trace(t1), event_from_trace(t2), pred]
    assert event_from_trace(t1).rounds_escalated == [True, False]
    assert escalation_by_round(events) == {"1": (1 / 3, 3), "2": (0.0, 1)}


def test_compared_runs_with_the_same_folder_name_stay_apart() -> None:
    from pathlib import Path

    from hymem.evaluation.dashboard import run_name

    a, b, c = Path("x/run"), Path("y/run"), Path("y/other")
    assert [run_name(p, [a, b, c]) for p in (a, b, c)] == ["x/run", "y/run", "other"]
