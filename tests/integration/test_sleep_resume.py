"""SIGKILL in the middle of a sleep, reopen, sleep again: the same final state as one
uninterrupted run on a copy of the same data, and no finished decision asked twice."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.testing import store_of

from tests.doubles import scripted_config
from tests.fixtures_sleep import scripted_update, seed_store, target_text

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEXTS = [
    "User likes coffee",
    "User lives in New York",
    "User has a dog named Rex",
    "User plays tennis on Sundays",
    "User prefers cappuccino in the mornings",
    "User moved to San Francisco in 2023",
    "User adopted a second dog",
    "User joined a tennis club",
    "User drinks espresso after lunch",
    "User walks the dogs every morning",
]
FLOOR = 0.2  # low, so almost every summary has a queue and there are many decisions to cut

CHILD = """
import sys
from hymem.core.config import MemoryConfig
from hymem.api.memory import Memory

cfg = MemoryConfig.defaults(
    llm="openai:test-model", llm_base_url=sys.argv[2], llm_api_key="test-key",
    llm_timeout_s=60, llm_max_retries=0, sleep_similarity_floor=float(sys.argv[3]),
)
with Memory(sys.argv[1], config=cfg) as mem:
    mem.sleep(max_workers=1)
"""


def _rules() -> dict[str, Any]:
    upd = {"action": "update", "reason": "refined"}
    return {
        "coffee": lambda ids: {
            **upd,
            "text": "User likes coffee, mostly cappuccino",
            "evidence_id": ids[0],
        },
        "New York": lambda ids: {"action": "delete", "evidence_id": ids[0], "reason": "moved"},
        "named Rex": lambda ids: {
            **upd,
            "text": "User has two dogs, one named Rex",
            "evidence_id": ids[0],
        },
        "plays tennis": lambda ids: {
            **upd,
            "text": "User plays tennis on Sundays at a club",
            "evidence_id": ids[0],
        },
    }


def _state(mem: Memory) -> set[tuple[Any, ...]]:
    return {
        (r.id, r.text, r.status.value, r.superseded_by, r.previous_id, r.version)
        for r in store_of(mem).get_summaries("u", statuses=None)
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a torn last line
            out.append(json.loads(line))
    return out


def test_sigkill_mid_sleep_resumes_to_the_same_state(
    tmp_path: Path, llm_server: Any, sleep_minilm: Any
) -> None:
    reply = scripted_update(_rules())
    # three decisions answer, the fourth hangs: the child is killed while waiting on it
    llm_server.add_rule(role="update", reply=reply, times=3, delay_s=0.05)
    llm_server.add_rule(role="update", reply=reply, delay_s=120)
    cfg = scripted_config(llm_server, sleep_similarity_floor=FLOOR, llm_max_retries=1)
    main, copy = tmp_path / "main", tmp_path / "copy"
    with Memory(main, config=cfg, embedder=sleep_minilm) as mem:
        sums = seed_store(store_of(mem), sleep_minilm, "u", TEXTS)
    by_text = {s.text: s.id for s in sums}
    shutil.copytree(main, copy)

    journal = main / "sleep" / "journal.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(main), llm_server.base_url, str(FLOOR)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 240
        while len(_lines(journal)) < 3:
            assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
            assert time.monotonic() < deadline, "the child never journaled three decisions"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    finished = {e["target_id"] for e in _lines(journal)}
    assert len(finished) == 3
    llm_server.reset()
    llm_server.add_rule(role="update", reply=reply)

    # the store was not touched by the killed run: decisions are applied only at the end
    with Memory(main, config=cfg, embedder=sleep_minilm) as mem:
        assert all(
            r.status.value == "active" for r in store_of(mem).get_summaries("u", statuses=None)
        )
        report = mem.sleep(max_workers=2)
        asked = {by_text[target_text(b)] for _, b in llm_server.requests}
        resumed_state = _state(mem)
    assert asked and not (asked & finished), "a finished decision was asked again"
    assert report.skipped_from_journal == len(finished)
    assert report.asked == len(asked) == report.queues_built - len(finished)

    with Memory(copy, config=cfg, embedder=sleep_minilm) as mem:
        once = mem.sleep(max_workers=3)
        assert once.asked == report.queues_built
        assert _state(mem) == resumed_state
    assert report.new_versions == once.new_versions >= 1 and report.deleted == once.deleted == 1
