"""Sleep on a real memory folder (LanceDB + Tantivy + MiniLM) with the real openai client
talking to the scripted server, and with the extractive backend."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.core.types import SummaryStatus
from hymem.testing import store_of

from tests.doubles import scripted_config
from tests.fixtures_sleep import scripted_update, seed_store

pytestmark = pytest.mark.integration

TEXTS = [
    "User likes coffee",  # day 0
    "User lives in New York",  # day 1
    "User plans a trip to Tokyo in May",  # day 2
    "User prefers cappuccino in the mornings",  # day 3: refines coffee
    "User moved to San Francisco in 2023",  # day 4: contradicts New York
    "User asked about visiting Kyoto",  # day 5: must not erase Tokyo
]
MERGED = "User likes coffee, especially cappuccino in the mornings"
# One retry per model call, and a floor low enough for MiniLM to queue the related facts.
SLEEP_SETTINGS: dict[str, Any] = {"llm_max_retries": 1, "sleep_similarity_floor": 0.4}


def _rules() -> dict[str, Any]:
    return {
        "likes coffee": lambda ids: {
            "action": "update",
            "text": MERGED,
            "evidence_id": ids[0],
            "reason": "refinement",
        },
        "New York": lambda ids: {
            "action": "delete",
            "text": None,
            "evidence_id": ids[0],
            "reason": "moved",
        },
        # the lossy merge LightMem warns about: only the Kyoto sentence survives
        "Tokyo": lambda ids: {
            "action": "update",
            "text": "User asked about visiting Kyoto.",
            "evidence_id": ids[0],
            "reason": "same trip",
        },
    }


@pytest.fixture
def seeded(tmp_path: Path, llm_server: Any, sleep_minilm: Any) -> Any:
    llm_server.add_rule(role="update", reply=scripted_update(_rules()))
    mem = Memory(
        tmp_path / "mem",
        config=scripted_config(llm_server, **SLEEP_SETTINGS),
        embedder=sleep_minilm,
    )
    sums = seed_store(store_of(mem), sleep_minilm, "alice", TEXTS)
    seed_store(store_of(mem), sleep_minilm, "bob", TEXTS)
    yield mem, {s.text: s.id for s in sums}
    mem.close()


def _states(mem: Memory, user: str) -> dict[str, tuple[str, str, str | None]]:
    return {
        r.id: (r.text, r.status.value, r.superseded_by)
        for r in store_of(mem).get_summaries(user, statuses=None)
    }


def test_sleep_applies_versions_guards_and_is_idempotent(seeded: Any, llm_server: Any) -> None:
    mem, ids = seeded
    bob_before = _states(mem, "bob")
    report = mem.sleep(user_id="alice", max_workers=4)
    assert report.decisions["update"] == 1 and report.decisions["delete"] == 1
    assert report.decisions["rejected"] == 1
    assert report.model_calls == len(llm_server.requests_for("update")) >= 3
    assert report.prompt_tokens > 0 and report.queue_seconds >= 0
    coffee = mem.history(ids["User likes coffee"], user_id="alice")
    assert [r.status for r in coffee] == [SummaryStatus.SUPERSEDED, SummaryStatus.ACTIVE]
    new = coffee[1]
    assert (new.text, new.origin, new.version) == (MERGED, "consolidated", 2)
    assert new.segment_id == coffee[0].segment_id and coffee[0].text == "User likes coffee"
    gone = store_of(mem).get_summaries("alice", ids=[ids["User lives in New York"]], statuses=None)[
        0
    ]
    assert gone.status == SummaryStatus.DELETED and gone.reason == "moved"
    assert gone.evidence_id == ids["User moved to San Francisco in 2023"]
    tokyo = ids["User plans a trip to Tokyo in May"]
    assert store_of(mem).get_summaries("alice", ids=[tokyo])[0].status == SummaryStatus.ACTIVE
    # the new version is searchable in both indexes; the old one is not served
    for mode in ("dense", "lexical"):
        hits = [h.id for h in mem.search("cappuccino coffee", user_id="alice", mode=mode)]
        assert new.id in hits and ids["User likes coffee"] not in hits
    assert _states(mem, "bob") == bob_before  # another user's summaries are never touched
    # second sleep: nothing changes and the model is not asked again
    asked = len(llm_server.requests)
    state = _states(mem, "alice")
    again = mem.sleep(user_id="alice")
    assert len(llm_server.requests) == asked and again.model_calls == 0
    assert again.new_versions == again.deleted == again.superseded == 0
    assert _states(mem, "alice") == state


def test_dry_run_and_restore(seeded: Any, llm_server: Any) -> None:
    mem, ids = seeded
    before = _states(mem, "alice")
    dry = mem.sleep(user_id="alice", dry_run=True)
    assert {p.action for p in dry.planned} == {"update", "delete"}
    assert _states(mem, "alice") == before
    assert not (mem.path / "sleep" / "journal.jsonl").exists()
    mem.sleep(user_id="alice")
    old = ids["User likes coffee"]
    merged_id = store_of(mem).get_summaries("alice", ids=[old], statuses=None)[0].superseded_by
    restored = mem.restore(old, user_id="alice")
    assert restored.status == SummaryStatus.ACTIVE
    states = _states(mem, "alice")
    assert states[merged_id or ""][1:] == ("superseded", old)
    hits = [h.id for h in mem.search("coffee", user_id="alice")]
    assert old in hits and merged_id not in hits
    mem.restore(ids["User lives in New York"], user_id="alice")
    asked = len(llm_server.requests)
    mem.sleep(user_id="alice")  # restored versions are not consolidated away again
    assert len(llm_server.requests) == asked and _states(mem, "alice") == _states(mem, "alice")
    assert _states(mem, "alice")[old][1] == "active"


def test_readers_see_old_or_new_during_sleep(seeded: Any, llm_server: Any) -> None:
    mem, ids = seeded
    old = ids["User likes coffee"]
    seen: list[set[str]] = []
    stop = threading.Event()

    started = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            hits = mem.search("coffee", user_id="alice", k=10, mode="dense")
            seen.append({h.id for h in hits})
            started.set()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        assert started.wait(60)
        mem.sleep(user_id="alice", max_workers=2)
        new = store_of(mem).get_summaries("alice", ids=[old], statuses=None)[0].superseded_by
        for _ in range(3):
            seen.append({h.id for h in mem.search("coffee", user_id="alice", mode="dense")})
    finally:
        stop.set()
        thread.join()
    bad = [(i, sorted(s)) for i, s in enumerate(seen) if not (old in s or new in s)]
    assert len(seen) > 3 and not bad, (old, new, bad, len(seen))
    assert new in seen[-1] and old not in seen[-1]


def test_extractive_sleep_merges_repeats_and_ends_a_changed_fact(
    tmp_path: Path, sleep_minilm: Any
) -> None:
    cfg = MemoryConfig.defaults(llm="extractive", sleep_similarity_floor=0.4)
    with Memory(tmp_path / "ex", config=cfg, embedder=sleep_minilm) as mem:
        sums = seed_store(
            store_of(mem),
            sleep_minilm,
            "u",
            [
                "Caroline went to the LGBTQ support group on 7 May 2023.",
                "User lives in New York",
                "caroline went to the LGBTQ support group on 7 May 2023",
                "User moved to San Francisco in 2023",
            ],
        )
        report = mem.sleep(user_id="u")
        assert report.backend == "extractive" and report.deleted == 0
        assert report.decisions["update"] == 1 and report.decisions["delete"] == 0
        states = _states(mem, "u")
        assert states[sums[0].id][1] == "superseded"
        # Issue 30: a clear change of one fact (where someone lives) is the extractive's call
        # now, in sleep's fact pass: New York ends when San Francisco was said.
        assert states[sums[1].id][1] == "superseded" and report.facts.superseded == 1
        assert sum(1 for t, s, _ in states.values() if s == "active") == 3


def test_sleep_on_close_runs_a_sleep(tmp_path: Path) -> None:
    from hymem.embed.embedders import HashingEmbedder

    emb = HashingEmbedder()
    dup = "Caroline went to the LGBTQ support group on 7 May 2023."
    cfg = MemoryConfig.defaults(llm="extractive", sleep_on_close=True)
    mem = Memory(tmp_path / "m", config=cfg, embedder=emb)
    sums = seed_store(store_of(mem), emb, "u", [dup, dup.lower()])
    mem.close()
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(llm="extractive"), embedder=emb) as m2:
        chain = m2.history(sums[0].id, user_id="u")
    assert [r.status.value for r in chain] == ["superseded", "active"]
    assert (tmp_path / "m" / "sleep" / "journal.jsonl").exists()


def test_sleep_over_the_real_write_path(tmp_path: Path, sleep_minilm: Any) -> None:
    cfg = MemoryConfig.defaults(llm="extractive", sleep_similarity_floor=0.3)
    msgs = [
        {"speaker": "Caroline", "text": "I went to the LGBTQ support group yesterday."},
        {"speaker": "Melanie", "text": "That's great! I painted a sunrise last week."},
        {"speaker": "Caroline", "text": "I went to the LGBTQ support group yesterday."},
        {"speaker": "Melanie", "text": "I painted a sunrise last week at the lake."},
    ]
    with Memory(tmp_path / "w", config=cfg, embedder=sleep_minilm) as mem:
        mem.add(msgs, user_id="u", session_id="s1", timestamp="2023-05-08T13:56:00")
        written = mem.flush(user_id="u").summaries_written
        report = mem.sleep(user_id="u")
        active = len(store_of(mem).get_summaries("u"))
        assert report.summaries_scanned == (
            active + report.superseded + report.deleted - report.new_versions
        )
        assert report.summaries_scanned >= len(written) > 0 and report.deleted == 0
        again = mem.sleep(user_id="u")
        assert again.asked == 0 and again.new_versions == 0


def test_auto_sleep_is_decided_by_memory_per_user(tmp_path: Path) -> None:
    dup = "Caroline went to the LGBTQ support group on 7 May 2023."
    cfg = MemoryConfig.defaults(llm="extractive", auto_sleep_after=2)
    with Memory(tmp_path / "a", config=cfg, embedder="hashing") as mem:

        def store(user: str, text: str) -> str:
            mem.add([{"speaker": "Caroline", "text": text}], user_id=user, session_id="s")
            (summary_id,) = mem.flush(user_id=user).summaries_written
            return summary_id

        first = store("alice", dup)
        store("bob", dup)  # bob's summary counts for bob only: no sleep for anyone yet
        assert [r.status.value for r in mem.history(first, user_id="alice")] == ["active"]
        store("alice", dup.lower())  # alice's second summary: her sleep merges the twins
        chain = mem.history(first, user_id="alice")
        assert [r.status.value for r in chain] == ["superseded", "active"]
        assert len(store_of(mem).get_summaries("bob")) == 1
