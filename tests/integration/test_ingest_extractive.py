"""End to end with the real store (LanceDB + Tantivy), real MiniLM and the extractive backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.backfill.locomo import conversation_messages, load_locomo
from hymem.core.types import AddResult, TurnStatus
from hymem.testing import store_of

from tests.fixtures_ingest import LOCOMO_MINI

pytestmark = pytest.mark.integration


def ingest_by_session(mem: Memory, conv: Any) -> list[AddResult]:
    """One add per session (turn-by-turn feeding is covered with the hashing embedder)."""
    results = [
        mem.add(msgs, user_id=conv.sample_id, session_id=session_id, timestamp=when)
        for session_id, when, msgs in conversation_messages(conv)
    ]
    results.append(mem.flush(user_id=conv.sample_id))
    return results


def test_locomo_conversation_becomes_linked_levels(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    conv = load_locomo(LOCOMO_MINI)[0]
    user = conv.sample_id
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(), embedder=minilm) as mem:
        results = ingest_by_session(mem, conv)
        assert all(r.error is None for r in results)
        assert {r.backend for r in results if r.segments_written} == {"extractive"}
        # sessions end -> buffers flushed before the final flush; nothing is left pending
        assert any(r.segments_written for r in results[:-1])
        assert mem.pending(user_id=user) == []
        stats = mem.stats(user_id=user)
        assert stats["turns"] == 30 and stats["pending_turns"] == 0
        assert 0 < stats["segments"] <= 30 and stats["summaries"] > 0

        turns = store_of(mem).get_turns(user)
        assert all(t.status == TurnStatus.STORED and t.segment_id for t in turns)
        seg_ids = {t.segment_id for t in turns}
        segments = {s.id: s for s in store_of(mem).get_segments(user, sorted(seg_ids))}
        for t in turns:  # every turn is covered by the segment it points to, raw text kept
            seg = segments[t.segment_id]
            assert t.id in seg.turn_ids and t.text in seg.text
        image_turn = next(t for t in turns if t.id == "D1:8")
        assert "[shares a photo of a painting of a sunset over a lake]" in image_turn.text

        summaries = store_of(mem).get_summaries(user)
        written = {s for r in results for s in r.summaries_written}
        assert {s.id for s in summaries} == written
        assert all(
            s.segment_id in {x for r in results for x in r.segments_written} for s in summaries
        )
        # relative dates are resolved against the session time by the summariser
        hits = mem.search("LGBTQ support group", user_id=user, k=3)
        assert any("7 May 2023" in h.text for h in hits)
        seg_hits = mem.search("pottery bowl glazed blue", user_id=user, k=3, level="segment")
        assert any("D3:8" in h.turn_ids for h in seg_hits)
        usage = sum(
            (r.usage.roles["summarise"].calls for r in results if "summarise" in r.usage.roles), 0
        )
        assert usage == len([r for r in results if r.segments_written])


def test_reingest_is_idempotent(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    conv = load_locomo(LOCOMO_MINI)[1]
    cfg = MemoryConfig.defaults()
    with Memory(tmp_path / "m", config=cfg, embedder=minilm) as mem:
        for session_id, when, msgs in conversation_messages(conv):
            mem.add(msgs, user_id=conv.sample_id, session_id=session_id, timestamp=when)
        mem.flush(user_id=conv.sample_id)
        before = mem.stats(user_id=conv.sample_id)
        for session_id, when, msgs in conversation_messages(conv):
            res = mem.add(msgs, user_id=conv.sample_id, session_id=session_id, timestamp=when)
            assert res.new_turn_ids == [] and res.segments_written == []
        assert mem.flush(user_id=conv.sample_id).segments_written == []
        assert mem.stats(user_id=conv.sample_id) == before
