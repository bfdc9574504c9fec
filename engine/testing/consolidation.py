"""Write-time consolidation's promises, the same on every kind of store: a repeat merged from
another segment leaves a memory that still leads to the raw text of every turn it rests on
(`get()` shows each segment), and a twin in another scope (agent, run, metadata) is never
merged into, nor ended by, its twin. The real write path (`Ingestor`, extractive summariser,
hashing embedder) and the real `get()` (`Editor`) over each `Storage` the suite opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.filters import Filter
from hymem.core.time import utcnow
from hymem.core.types import AddResult
from hymem.indexes.ports import Storage
from hymem.llm import LazyRoles
from hymem.manage.editor import Editor
from hymem.testing.records import StorageKit
from hymem.write.guard import WriteGuard
from hymem.write.ingestor import Ingestor
from hymem.write.request import add_request

USER = "dana"


@dataclass
class Writer:
    """The write path and `get()` over one store under test."""

    store: Storage
    ingestor: Ingestor
    editor: Editor

    def say(self, texts: list[str], when: str, session: str, **metadata: Any) -> AddResult:
        turns = [{"speaker": "Dana", "text": t} for t in texts]
        self.ingestor.add(
            add_request(
                turns, user_id=USER, session_id=session, timestamp=when, metadata=metadata or None
            )
        )
        return self.ingestor.flush(user_id=USER)


def assert_memories_lead_home(writer: Writer, user_id: str = USER) -> None:
    """The provenance invariant: every active memory's `get()` shows its own segment first and
    a segment holding each turn it rests on, and the raw text of each of those turns."""
    for rec in writer.store.get_summaries(user_id):
        item = writer.editor.get(rec.memory_id, user_id)
        assert item.summary.id == rec.id
        shown = item.segments
        assert shown and shown[0] == item.segment and shown[0].id == rec.segment_id
        held = {t for seg in shown for t in seg.turn_ids}
        assert set(rec.source_turn_ids) <= held, (rec.text, rec.source_turn_ids, held)
        assert {t.id for t in item.source_turns} == set(rec.source_turn_ids)
        raw = "\n".join(seg.text for seg in shown)
        assert all(t.text in raw for t in item.source_turns), rec.text


class ConsolidationTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    @pytest.fixture
    def writer(self, storage_kit: StorageKit) -> Iterator[Writer]:
        config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
        store, embedder = storage_kit.store, storage_kit.embedder
        guard = WriteGuard(store)
        roles = LazyRoles(config, embedder)
        ingestor = Ingestor(store, embedder, roles, config, clock=utcnow, guard=guard)
        yield Writer(store, ingestor, Editor(store, embedder, guard=guard, clock=utcnow))
        ingestor.close()
        roles.close()

    def test_a_repeat_merged_from_another_segment_leads_to_both(self, writer: Writer) -> None:
        writer.say(
            ["Hi there, nice weather today.", "I work at Acme as an engineer."],
            "2024-01-01T10:00:00",
            "s1",
        )
        merged = writer.say(
            ["I work at Acme.", "We should grab lunch."], "2024-02-01T10:00:00", "s2"
        )
        assert merged.merged  # the repeat was merged into the first memory
        acme = [s for s in writer.store.get_summaries(USER) if "Acme" in s.text]
        assert len(acme) == 1 and len(acme[0].source_turn_ids) == 2
        segments = {t.segment_id for t in writer.store.get_turns(USER, ids=acme[0].source_turn_ids)}
        assert len(segments) == 2  # the memory rests on turns of two segments
        assert_memories_lead_home(writer)

    def test_a_twin_in_another_scope_is_never_merged(self, writer: Writer) -> None:
        writer.say(["I work at Acme as an engineer."], "2024-01-01T10:00:00", "s1", agent_id="A")
        twin = writer.say(
            ["I work at Acme as an engineer."], "2024-02-01T10:00:00", "s2", agent_id="B"
        )
        writer.say(["I live in Lisbon."], "2024-01-02T10:00:00", "s3", run_id="r1")
        moved = writer.say(["I live in Porto now."], "2024-03-01T10:00:00", "s4", run_id="r2")
        assert twin.merged == [] and moved.superseded == []
        for scope in ({"agent_id": "A"}, {"agent_id": "B"}, {"run_id": "r1"}, {"run_id": "r2"}):
            rows = writer.store.page(
                USER, "summary", statuses=["active"], filters=Filter.parse(scope)
            )
            assert len(rows) == 1, scope
        assert_memories_lead_home(writer)


__all__ = ["ConsolidationTests"]
