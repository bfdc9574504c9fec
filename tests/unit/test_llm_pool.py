"""Bounded concurrency helper, usage meter and formatting: pure, no model or disk."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime

import pytest
from hymem.core.types import RoleUsage
from hymem.llm.accounting import UsageMeter
from hymem.llm.cache import cache_key
from hymem.llm.formatting import format_memories, format_pool, format_segments, format_span
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import ContextItem, SegmentInput


def _tracked(max_seen: list[int], delay: float = 0.02) -> Callable[[int], int]:
    lock = threading.Lock()
    running = [0]

    def fn(x: int) -> int:
        with lock:
            running[0] += 1
            max_seen[0] = max(max_seen[0], running[0])
        time.sleep(delay)
        with lock:
            running[0] -= 1
        return x * 10

    return fn


def test_map_concurrent_keeps_order_and_bound() -> None:
    seen = [0]
    assert map_concurrent(_tracked(seen), list(range(12)), 3) == [x * 10 for x in range(12)]
    assert 1 < seen[0] <= 3


def test_map_concurrent_exceptions() -> None:
    def fn(x: int) -> int:
        if x % 2:
            raise KeyError(x)
        return x

    out = map_concurrent(fn, [0, 1, 2, 3], 2, return_exceptions=True)
    assert out[0] == 0 and out[2] == 2
    assert isinstance(out[1], KeyError) and isinstance(out[3], KeyError)
    with pytest.raises(KeyError, match="1"):
        map_concurrent(fn, [0, 1, 2, 3], 2)
    assert map_concurrent(fn, [], 4) == []
    with pytest.raises(ValueError):
        map_concurrent(fn, [0], 0)


def test_usage_meter_is_thread_safe() -> None:
    meter = UsageMeter()

    def work(_: int) -> None:
        for _ in range(200):
            meter.record("select", RoleUsage(calls=1, prompt_tokens=3, completion_tokens=2))

    map_concurrent(work, list(range(8)), 8)
    snap = meter.snapshot()
    assert snap["select"].calls == 1600 and snap["select"].total_tokens == 8000
    assert meter.total().prompt_tokens == 4800
    snap["select"].calls = 0
    assert meter.snapshot()["select"].calls == 1600  # snapshots are copies


def test_cache_key_depends_on_everything() -> None:
    msgs = [{"role": "user", "content": "q"}]
    base = cache_key("m", msgs, {"t": 0})
    assert base == cache_key("m", [{"role": "user", "content": "q"}], {"t": 0})
    assert base != cache_key("m2", msgs, {"t": 0})
    assert base != cache_key("m", [{"role": "user", "content": "q2"}], {"t": 0})
    assert base != cache_key("m", msgs, {"t": 1})


def test_every_item_shows_its_date() -> None:
    items = [
        ContextItem(id="a", text="Met Ann", time_start=datetime(2023, 5, 8, 13, 56)),
        ContextItem(
            id="b",
            text="Left",
            time_start=datetime(2023, 5, 8, 13, 0),
            time_end=datetime(2023, 5, 9, 9, 5),
        ),
        ContextItem(id="c", text="Undated"),
    ]
    text = format_memories(items)
    assert "- [a] (8 May 2023, 13:56) Met Ann" in text
    assert "(8 May 2023, 13:00 to 9 May 2023, 09:05)" in text
    assert "[c] (date unknown)" in text
    assert format_span(datetime(2023, 5, 8, 13), datetime(2023, 5, 8, 14)) == (
        "8 May 2023, 13:00 to 14:00"
    )
    seg = format_segments(
        [SegmentInput(segment_id="s1", lines=["[x] A: hi"], session_time=datetime(2023, 5, 8))]
    )
    assert 'session_time="8 May 2023, 00:00 (Monday)"' in seg
    assert format_pool([]) == "(none)" and format_pool(["x", " "]) == "1. x"
