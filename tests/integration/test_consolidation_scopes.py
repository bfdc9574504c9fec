"""Consolidation never joins memories of different scopes, at write time or in sleep: a twin
said by another agent, in another run, under other metadata, or kept by LangGraph under another
key or namespace stays its own memory, which its scope finds (search, get_all, the store's get
and search) and which outlives the deletion of its twin. On a real folder store (LanceDB and
Tantivy), with the extractive backend, and LangGraph's own `BaseStore` interface."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.adapters.langgraph import HymemStore
from hymem.core.types import SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of
from langgraph.store.base import BaseStore

pytestmark = pytest.mark.integration

USER = "dana"
ACME = "I work at Acme as an engineer."


def _memory(folder: Path, **settings: object) -> Memory:
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing", **settings)
    return Memory(folder, config=config, embedder=HashingEmbedder(64), create=True)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = _memory(tmp_path / "m")
    yield memory
    memory.close()


def _say(mem: Memory, text: str, when: str, session: str, **scope: Any) -> None:
    mem.add(
        [{"role": "user", "content": text}],
        user_id=USER,
        timestamp=when,
        session_id=session,
        **scope,
    )
    mem.flush(user_id=USER)


def _found(mem: Memory, query: str, **scope: Any) -> tuple[list[str], list[str]]:
    """(search hits' texts, get_all's texts) within one scope."""
    hits = [h.text for h in mem.search(query, user_id=USER, k=10, **scope)]
    listed = [s.text for s in mem.get_all(user_id=USER, limit=100, **scope).items]
    return hits, listed


def _reads(scope: dict[str, Any]) -> dict[str, Any]:
    """How a read names a write's scope: agent_id / run_id as they are, metadata as a filter."""
    return {"filters": scope["metadata"]} if "metadata" in scope else scope


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"agent_id": "A"}, {"agent_id": "B"}),
        ({"run_id": "r1"}, {"run_id": "r2"}),
        ({"metadata": {"kind": "x"}}, {"metadata": {"kind": "y"}}),
    ],
    ids=["agent", "run", "metadata"],
)
def test_a_twin_in_another_scope_stays_its_own_memory(
    mem: Memory, first: dict[str, Any], second: dict[str, Any]
) -> None:
    _say(mem, ACME, "2024-01-01T10:00:00", "s1", **first)
    _say(mem, ACME, "2024-02-01T10:00:00", "s2", **second)
    for scope in (first, second):
        hits, listed = _found(mem, "works at Acme", **_reads(scope))
        assert any("Acme" in t for t in hits), scope
        assert any("Acme" in t for t in listed), scope
    assert len(mem.get_all(user_id=USER, limit=100).items) == 2  # one active memory each


def test_a_newer_value_in_another_scope_ends_nothing(mem: Memory) -> None:
    """Agent B's user moved; agent A's record of where the user lives is A's own."""
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1", agent_id="A")
    _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2", agent_id="B")
    assert any("Lisbon" in t for t in _found(mem, "where does the user live", agent_id="A")[1])
    assert any("Porto" in t for t in _found(mem, "where does the user live", agent_id="B")[1])
    ended = mem.get_all(user_id=USER, status="superseded", limit=100).items
    assert ended == []


def test_sleep_merges_within_a_scope_only(tmp_path: Path) -> None:
    """Written without write-time consolidation, the twins meet in sleep's fact pass: the
    same scope's repeat is merged, the other scope's twin and value are left alone."""
    mem = _memory(tmp_path / "m", consolidate_on_write=False)
    try:
        _say(mem, ACME, "2024-01-01T10:00:00", "s1", agent_id="A")
        _say(mem, ACME, "2024-02-01T10:00:00", "s2", agent_id="B")
        _say(mem, "I work at Acme.", "2024-03-01T10:00:00", "s3", agent_id="A")
        _say(mem, "I live in Lisbon.", "2024-01-02T10:00:00", "s4", agent_id="A")
        _say(mem, "I live in Porto now.", "2024-03-02T10:00:00", "s5", agent_id="B")
        report = mem.sleep(user_id=USER)
        assert report.facts.merged == 1 and report.facts.superseded == 0
        a_texts = _found(mem, "works at Acme", agent_id="A")[1]
        b_texts = _found(mem, "works at Acme", agent_id="B")[1]
        assert sum("Acme" in t for t in a_texts) == 1  # A's repeat merged into A's memory
        assert sum("Acme" in t for t in b_texts) == 1 and any("Porto" in t for t in b_texts)
        assert any("Lisbon" in t for t in a_texts)
        for item in mem.get_all(user_id=USER, limit=100).items:  # each rests on its own turns
            turns = store_of(mem).get_turns(USER, ids=item.source_turn_ids)
            assert {t.metadata.get("agent_id") for t in turns} == {item.metadata["agent_id"]}
    finally:
        mem.close()


# --- LangGraph's BaseStore ------------------------------------------------------------------

COFFEE = {"text": "The user prefers dark roast coffee in the morning."}


def test_two_keys_holding_one_text_are_two_items(mem: Memory) -> None:
    store: BaseStore = HymemStore(mem, prefix=("memories",))
    ns = ("memories", USER)
    store.put(ns, "first", dict(COFFEE))
    store.put(ns, "second", dict(COFFEE))
    second = store.get(ns, "second")
    assert second is not None and second.value == COFFEE and second.key == "second"
    assert sorted(i.key for i in store.search(ns, query="dark roast coffee")) == [
        "first",
        "second",
    ]
    store.delete(ns, "first")
    assert store.get(ns, "first") is None
    left = store.get(ns, "second")
    assert left is not None and left.value == COFFEE
    assert [i.key for i in store.search(ns, query="dark roast coffee")] == ["second"]


def test_one_key_in_two_agents_namespaces_is_two_items(mem: Memory) -> None:
    store: BaseStore = HymemStore(mem, prefix=("memories",))
    a, b = ("memories", USER, "A"), ("memories", USER, "B")
    store.put(a, "drink", dict(COFFEE))
    store.put(b, "drink", dict(COFFEE))
    got = store.get(b, "drink")
    assert got is not None and got.value == COFFEE and got.namespace == b
    found = store.search(b, query="dark roast coffee")
    assert [(i.namespace, i.key) for i in found] == [(b, "drink")]
    store.delete(a, "drink")
    assert store.get(a, "drink") is None
    assert store.get(b, "drink") is not None
    kept = [s for s in mem.get_all(user_id=USER, limit=100).items]
    assert [s.metadata.get("agent_id") for s in kept] == ["B"]
    assert all(s.status is SummaryStatus.ACTIVE for s in kept)
