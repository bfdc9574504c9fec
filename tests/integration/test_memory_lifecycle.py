"""Opening and closing a Memory leaves nothing running: every thread hymem starts is named
`hymem-*` and is joined by `Memory.close()`."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig

pytestmark = pytest.mark.integration

TURNS = [
    {"speaker": "Caroline", "text": "I went to the LGBTQ support group yesterday."},
    {"speaker": "Melanie", "text": "That's great! I painted a sunrise at the lake last week."},
    {"speaker": "Caroline", "text": "I went to the LGBTQ support group yesterday, again."},
]


def hymem_threads(besides: set[threading.Thread]) -> list[str]:
    """hymem threads alive now that were not in `besides` (other tests' leftovers)."""
    alive = threading.enumerate()
    return [t.name for t in alive if t.name.startswith("hymem") and t not in besides]


def test_open_use_close_ten_times_leaves_no_hymem_thread(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    config = MemoryConfig.defaults(llm="extractive", sleep_similarity_floor=0.3)
    for i in range(10):
        with Memory(tmp_path / "m", config=config, embedder="hashing") as mem:
            mem.add(TURNS, user_id="u", session_id=f"s{i}", timestamp="2023-05-08T13:56:00")
            assert mem.flush(user_id="u").pending == 0
            answer = mem.ask("Where did Caroline go?", user_id="u", depth="deep", d=2)
            assert answer.trace_id
            assert mem.search("support group", user_id="u", k=3)
            mem.sleep(user_id="u")
            assert mem.traces(user_id="u")  # the trace thread has written its rows
            assert hymem_threads(before)  # something did run in the background
        assert hymem_threads(before) == [], f"left running after close #{i + 1}"
