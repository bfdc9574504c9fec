"""Sleep gives the model another go at the buffers its summariser failed on: where the model now
writes facts, they replace the extractive stand-ins (superseded, never deleted); where it fails
again or writes nothing, the stand-ins stay for the next sleep. Real LanceDB and Tantivy."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import LLMUnavailable
from hymem.embed.embedders import HashingEmbedder
from hymem.llm.roles import Role, SegmentSummary, SummariseOutput

from tests.doubles import ScriptedRoles

pytestmark = pytest.mark.integration

USER = "ann"
T0 = "2023-05-08T13:56:00"
DOWN = LLMUnavailable("model server down", role="summarise")


def remembered(path: Path, roles: ScriptedRoles) -> Memory:
    """Three turns stored while the model summariser was down: extractive stand-ins."""
    config = MemoryConfig.defaults(embedder="hashing", consolidate_on_write=False)
    mem = Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)
    lines = [
        {"speaker": "Ann", "text": "I adopted a puppy called Rex from the shelter", "id": "t1"},
        {"speaker": "Ann", "text": "Rex loves long walks by the river", "id": "t2"},
        {"speaker": "Ann", "text": "I work as a nurse at the city hospital", "id": "t3"},
    ]
    result = mem.add(lines, user_id=USER, session_id="s1", timestamp=T0)
    result = mem.flush(user_id=USER)
    assert result.pending == 0
    return mem


def origins(mem: Memory) -> list[str]:
    return sorted(r.origin for r in mem.get_all(user_id=USER).items)  # type: ignore[union-attr]


def no_facts(mem: Memory) -> SummariseOutput:
    """A reply with no fact for any of the user's segments."""
    segments = mem.get_all(user_id=USER, level="segment").items
    return SummariseOutput(segments=[SegmentSummary(segment_id=s.id, facts=[]) for s in segments])


def test_the_model_replaces_the_fallback_summaries_once_it_answers(tmp_path: Path) -> None:
    roles = ScriptedRoles(summarise=[DOWN])  # down at write time, answering at sleep
    with remembered(tmp_path / "m", roles) as mem:
        assert set(origins(mem)) == {"fallback"}
        stand_ins = {r.id for r in mem.get_all(user_id=USER).items}
        report = mem.sleep(user_id=USER)
        again = report.resummarised
        assert again.waiting >= 1 and again.replaced == again.asked == again.waiting
        assert again.retired == len(stand_ins) and again.written >= 1
        assert report.usage.roles["summarise"].calls >= 1
        assert set(origins(mem)) == {"summary"}
        # the stand-ins are superseded, not gone: their history says why
        old = mem.get_all(user_id=USER, status="superseded").items
        assert {r.id for r in old} >= stand_ins
        assert all("re-summarised" in (r.reason or "") for r in old if r.id in stand_ins)
        assert mem.search("puppy Rex", user_id=USER, k=3)
        # a second sleep finds nothing left to do and writes no duplicate
        second = mem.sleep(user_id=USER).resummarised
        assert second.waiting == second.asked == second.written == 0
        assert len(mem.get_all(user_id=USER).items) == again.written


def test_a_model_still_down_leaves_the_fallbacks_for_the_next_sleep(tmp_path: Path) -> None:
    roles = ScriptedRoles(summarise=[DOWN, DOWN])
    with remembered(tmp_path / "m", roles) as mem:
        before = {r.id for r in mem.get_all(user_id=USER).items}
        again = mem.sleep(user_id=USER).resummarised
        assert again.asked >= 1 and again.replaced == 0 and again.kept == again.asked
        assert {r.id for r in mem.get_all(user_id=USER).items} == before
        # the model is back: the next sleep replaces them
        assert mem.sleep(user_id=USER).resummarised.replaced >= 1
        assert set(origins(mem)) == {"summary"}


def test_a_reply_without_facts_never_costs_a_stored_fact(tmp_path: Path) -> None:
    roles = ScriptedRoles(summarise=[DOWN])
    with remembered(tmp_path / "m", roles) as mem:
        roles.queue(Role.SUMMARISE, no_facts(mem))
        before = {r.id for r in mem.get_all(user_id=USER).items}
        again = mem.sleep(user_id=USER).resummarised
        assert again.replaced == 0 and again.kept == again.asked >= 1
        assert {r.id for r in mem.get_all(user_id=USER).items} == before


def test_a_dry_run_and_the_extractive_backend_only_count(tmp_path: Path) -> None:
    roles = ScriptedRoles(summarise=[DOWN])
    with remembered(tmp_path / "m", roles) as mem:
        before = {r.id for r in mem.get_all(user_id=USER).items}
        dry = mem.sleep(user_id=USER, dry_run=True).resummarised
        assert dry.waiting >= 1 and dry.asked == 0
        assert {r.id for r in mem.get_all(user_id=USER).items} == before
