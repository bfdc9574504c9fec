"""Metadata end to end with the real MiniLM and the extractive backend: `add(..., metadata=)`
and the agent_id / run_id scopes are kept on what is stored, and `search`, `ask` and `context`
with `filters=` only ever read the matching memories, whichever the question is closest to."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hymem import Filter, Memory, UserInputError
from hymem.embed.embedders import SentenceTransformerEmbedder
from hymem.testing import store_of

pytestmark = pytest.mark.integration

WORK = [
    {"speaker": "Caroline", "text": "I moved my team meeting to Tuesday at noon."},
    {"speaker": "Melanie", "text": "Good, the quarterly report is due on Friday."},
]
HOME = [
    {"speaker": "Caroline", "text": "I moved the dentist appointment to Tuesday morning."},
    {"speaker": "Melanie", "text": "Good, the kids have a swimming lesson on Friday."},
]


@pytest.fixture
def mem(tmp_path: Path, minilm: SentenceTransformerEmbedder) -> Iterator[Memory]:
    memory = Memory(tmp_path / "mem", embedder=minilm)
    when = "2023-05-08T13:56:00"
    memory.add(
        WORK,
        user_id="u",
        session_id="s1",
        timestamp=when,
        metadata={"topic": "work", "priority": 2},
        agent_id="planner",
    )
    memory.add(
        HOME,
        user_id="u",
        session_id="s1",
        timestamp=when,
        metadata={"topic": "home", "priority": 5},
        agent_id="helper",
        run_id="r7",
    )
    memory.flush(user_id="u")
    yield memory
    memory.close()


def test_search_keeps_only_matching_metadata(mem: Memory) -> None:
    everything = mem.search("What was moved to Tuesday?", user_id="u", k=10)
    assert {h.metadata["topic"] for h in everything} == {"work", "home"}
    for level in ("summary", "segment"):
        for mode in ("hybrid", "dense", "lexical"):
            hits = mem.search(
                "moved to Tuesday",
                user_id="u",
                k=10,
                level=level,
                mode=mode,
                filters={"topic": "home"},
            )
            assert hits and {h.metadata["topic"] for h in hits} == {"home"}, (level, mode)
            assert all(h.metadata["agent_id"] == "helper" for h in hits)
    ranged = mem.search("Friday", user_id="u", k=10, filters={"priority": {"lt": 3}})
    assert ranged and {h.metadata["topic"] for h in ranged} == {"work"}
    scoped = mem.search("Friday", user_id="u", k=10, agent_id="helper", run_id="r7")
    assert scoped and {h.metadata["run_id"] for h in scoped} == {"r7"}
    assert mem.search("Friday", user_id="u", k=10, agent_id="planner", run_id="r7") == []
    either = Filter.parse({"or": [{"topic": "work"}, {"run_id": "r7"}]})
    assert {h.metadata["topic"] for h in mem.search("Friday", user_id="u", filters=either)} == {
        "work",
        "home",
    }


def test_ask_and_context_read_only_matching_memories(mem: Memory) -> None:
    for depth in ("light", "deep"):
        ans = mem.ask(
            "What did Caroline move to Tuesday?",
            user_id="u",
            depth=depth,
            filters={"topic": "work"},
        )
        assert ans.evidence and all(h.metadata["topic"] == "work" for h in ans.evidence), depth
        assert "dentist" not in " ".join(h.text for h in ans.evidence)
    home = mem.ask("What did Caroline move to Tuesday?", user_id="u", agent_id="helper")
    assert home.evidence and all(h.metadata["agent_id"] == "helper" for h in home.evidence)
    assert "dentist" in home.text or any("dentist" in h.text for h in home.evidence)
    hits = mem.context("What is due on Friday?", user_id="u", filters={"topic": {"in": ["home"]}})
    assert hits and all(h.metadata["topic"] == "home" for h in hits)
    trace = mem.traces(user_id="u")[-1]
    assert trace.filters == {"agent_id": "helper"}


def test_stored_records_carry_the_metadata_and_bad_input_is_refused(mem: Memory) -> None:
    turns = store_of(mem).get_turns("u")
    assert {t.metadata["agent_id"] for t in turns} == {"planner", "helper"}
    assert all(s.metadata.get("priority") in (2, 5) for s in store_of(mem).get_summaries("u"))
    with pytest.raises(UserInputError, match="'topic': unknown operator 'like'"):
        mem.search("x", user_id="u", filters={"topic": {"like": "w%"}})
    with pytest.raises(UserInputError, match="'priority': 'gt' needs a number"):
        mem.ask("x", user_id="u", filters={"priority": {"gt": "2"}})
    with pytest.raises(UserInputError, match="x' OR"):
        mem.context("x", user_id="u", filters={"x' OR '1'='1": 1})
    with pytest.raises(UserInputError, match="metadata 'k'"):
        mem.add([{"speaker": "A", "text": "hi"}], user_id="u", metadata={"k": [1, 2]})
    assert len(store_of(mem).get_turns("u")) == len(turns)  # nothing written
