"""`Trace`: the typed per-ask record `Memory.traces()` returns. It must describe every field
the reader writes (no field silently left untyped), load rows written by older versions, keep
fields it does not know, and survive a JSON round trip."""

from __future__ import annotations

import json
from datetime import datetime

from hymem import RoleUsage, Trace
from hymem.read.trace_record import TraceRound, traces_from_rows

from tests.doubles import ScriptedRoles
from tests.fixtures_reader import make_fakes
from tests.log_events import capture_events


def test_every_field_the_reader_writes_is_typed() -> None:
    """A field added to `build_trace` must be added to `Trace` too (or it lands in extras)."""
    roles = ScriptedRoles(
        light=lambda q, c, p: ("?", False), reflect=[(False, "again"), (True, None)]
    )
    fakes = make_fakes(roles=roles)
    reader = fakes.reader()
    ans = reader.ask(fakes.params("q0", depth="auto", k=3, N=10, d=5))
    reader.flush_traces()
    (trace,) = traces_from_rows(fakes.store.read_traces())
    assert trace.extra == {}
    assert trace.rounds and all(not r.model_extra for r in trace.rounds)
    assert trace.trace_id == ans.trace_id and trace.path == ans.path
    assert isinstance(trace.usage["light_answer"], RoleUsage)
    assert trace.total_calls == ans.usage.total.calls


def test_an_old_row_loads_and_unknown_fields_are_kept() -> None:
    old = {  # the shape of a 0.1.0 row: none of the later fields, plus an evaluation's extras
        "trace_id": "t1",
        "user_id": "u",
        "created_at": "2024-03-01 09:00:00",
        "question": "q",
        "path": "deep",
        "escalated": True,
        "usage": {"select": {"calls": 2, "prompt_tokens": 10, "completion_tokens": 1}},
        "rounds": [{"index": 0, "escalated": True, "summary_ids": ["s1"], "future": 1}],
        "category": 2,
    }
    trace = Trace.model_validate(old)
    assert trace.created_at == datetime(2024, 3, 1, 9, 0)
    assert trace.usage["select"].calls == 2 and trace.as_of is None and trace.budget_stops == []
    assert trace.rounds == [TraceRound(index=0, escalated=True, summary_ids=["s1"], future=1)]
    assert trace.extra == {"category": 2}
    assert Trace.model_validate_json(trace.model_dump_json()) == trace


def test_nested_json_text_and_usage_dumps_are_accepted() -> None:
    trace = Trace.model_validate(
        {
            "trace_id": "t",
            "user_id": "u",
            "created_at": datetime(2024, 1, 1),
            "usage": json.dumps({"roles": {"deep_answer": {"prompt_tokens": 7}}}),
            "latency_ms": json.dumps({"total": 7}),
            "rounds": json.dumps([{"index": 0}]),
        }
    )
    assert trace.usage["deep_answer"].prompt_tokens == 7
    assert trace.latency_ms == {"total": 7.0} and trace.rounds[0].index == 0


def test_an_unreadable_row_is_logged_and_skipped() -> None:
    good = {"trace_id": "a", "user_id": "u", "created_at": datetime(2024, 1, 1)}
    with capture_events() as events:
        out = traces_from_rows([good, {"trace_id": "b", "user_id": "u"}, {**good, "trace_id": "c"}])
    assert [t.trace_id for t in out] == ["a", "c"]
    assert [e["trace_id"] for e in events if e["event"] == "trace.unreadable"] == ["b"]
