"""Issue 49, item 7: every instant leaving hymem as JSON carries its UTC offset, so a reader
that takes a bare ISO string as local time (JavaScript's `Date`) reads the right instant; what
the store holds stays naive UTC, and an export written before offsets still imports."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory
from hymem.core.types import SummaryRecord

from tests.fixtures_serve import Served, hashing_memory

pytestmark = pytest.mark.integration

A = {"Authorization": "Bearer ka"}
AWARE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
NAIVE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$")
TIME_KEYS = ("timestamp", "time_start", "time_end", "created_at", "updated_at", "as_of")


def _instants(value: Any) -> list[str]:
    """Every string under a key naming an instant, anywhere in a JSON value."""
    if isinstance(value, list):
        return [s for v in value for s in _instants(v)]
    if not isinstance(value, dict):
        return []
    found = [v for k, v in value.items() if k in TIME_KEYS and isinstance(v, str)]
    return found + [s for v in value.values() for s in _instants(v)]


def _seed(mem: Memory) -> None:
    turns = [{"role": "user", "content": "I adopted a beagle"}]
    mem.add(turns, user_id="alice", timestamp="2026-11-28T06:52:26.301996")
    mem.flush(user_id="alice")


def test_models_write_offsets_in_json_and_keep_naive_utc_in_python() -> None:
    now = datetime(2026, 11, 28, 6, 52, 26, 301996)
    rec = SummaryRecord(
        id="s1", user_id="u", segment_id="g", text="t", created_at=now, updated_at=now
    )
    assert rec.model_dump()["created_at"] == now  # what storage gets: unchanged
    assert rec.model_dump(mode="json")["created_at"] == "2026-11-28T06:52:26.301996Z"
    assert json.loads(rec.model_dump_json())["updated_at"] == "2026-11-28T06:52:26.301996Z"
    again = SummaryRecord.model_validate_json(rec.model_dump_json())
    assert again.created_at == now and again.created_at.tzinfo is None
    shifted = SummaryRecord.model_validate(
        {**rec.model_dump(), "created_at": "2026-11-28T08:52:26.301996+02:00"}
    )
    assert shifted.created_at == now and shifted.created_at.tzinfo is None


def test_rest_responses_carry_offsets(tmp_path: Path) -> None:
    mem = hashing_memory(tmp_path / "m")
    _seed(mem)
    srv = Served(mem)
    try:
        http = srv.http
        hits = http.post("/v1/search", json={"user_id": "alice", "query": "beagle"}, headers=A)
        page = http.get("/v1/memories", params={"user_id": "alice", "level": "turn"}, headers=A)
        ask = http.post("/v1/ask", json={"user_id": "alice", "question": "pet?"}, headers=A)
        traces = http.get("/v1/traces", params={"user_id": "alice"}, headers=A)
        for answer in (hits, page, ask, traces):
            stamps = _instants(answer.json())
            assert stamps, answer.url
            assert all(AWARE.match(s) for s in stamps), (answer.url, stamps)
        assert hits.json()[0]["time_start"] == "2026-11-28T06:52:26.301996Z"
    finally:
        srv.stop()


def test_exports_carry_offsets_and_old_exports_without_them_still_import(
    tmp_path: Path,
) -> None:
    out = tmp_path / "alice.jsonl"
    with hashing_memory(tmp_path / "src") as mem:
        _seed(mem)
        mem.export(out, user_id="alice")
        before = [t.model_dump() for t in mem.get_all(user_id="alice", level="turn").items]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    stamps = [*_instants(rows), rows[0]["exported_at"]]
    assert stamps and all(AWARE.match(s) for s in stamps), stamps
    old = tmp_path / "old.jsonl"  # as hymem wrote exports before: no offsets
    old.write_text(re.sub(r'(\d\d:\d\d:\d\d(?:\.\d+)?)Z"', r'\1"', out.read_text()))
    assert all(NAIVE.match(s) for s in _instants([json.loads(x) for x in old.open()]))
    for path, user in ((out, "new"), (old, "old")):
        with hashing_memory(tmp_path / user) as dst:
            dst.import_records(path, user_id=user)
            got = [t.model_dump() for t in dst.get_all(user_id=user, level="turn").items]
        assert [{**t, "user_id": "alice"} for t in got] == before
        assert all(t["created_at"].tzinfo is None for t in got)
