"""A process ingesting a LoCoMo-format file is SIGKILLed mid-ingest; reopening and flushing
stores every accepted turn exactly once, with no duplicate segments or summaries."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.backfill.locomo import conversation_messages, load_locomo
from hymem.core.types import TurnStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

from tests.fixtures_ingest import LOCOMO_MINI

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHILD = textwrap.dedent(
    """
    import sys
    from hymem import Memory, MemoryConfig
    from hymem.embed.embedders import HashingEmbedder
    from hymem.backfill.locomo import conversation_messages, load_locomo

    store, fixture = sys.argv[1], sys.argv[2]
    cfg = MemoryConfig.defaults(embedder="hashing", buffer_tokens=96)
    mem = Memory(store, config=cfg, embedder=HashingEmbedder(64))
    for conv in load_locomo(fixture):
        for session_id, when, msgs in conversation_messages(conv):
            for m in msgs:
                res = mem.add([m], user_id=conv.sample_id, session_id=session_id,
                              timestamp=when)
                print("added", m["id"], len(res.segments_written), flush=True)
    print("finished", flush=True)
    """
)
KILL_AFTER_COMMITS = 2  # let some buffers commit, then kill while later turns are in flight


def ingest_all(mem: Memory) -> None:
    for conv in load_locomo(LOCOMO_MINI):
        for session_id, when, msgs in conversation_messages(conv):
            for m in msgs:
                mem.add([m], user_id=conv.sample_id, session_id=session_id, timestamp=when)
        mem.flush(user_id=conv.sample_id)


def test_sigkill_mid_ingest_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    store = tmp_path / "mem"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LANCEDB_LOG": "error"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(store), str(LOCOMO_MINI)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    accepted: list[str] = []
    commits = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("added"):
            _, turn_id, written = line.split()
            accepted.append(turn_id)
            commits += int(written) > 0
            if commits >= KILL_AFTER_COMMITS:
                break
        elif line.startswith("finished"):
            pytest.fail("the child finished before it could be killed")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL and accepted

    cfg = MemoryConfig.defaults(embedder="hashing", buffer_tokens=96)
    with Memory(store, config=cfg, embedder=HashingEmbedder(64)) as mem:
        users = ["conv-mini-1", "conv-mini-2"]
        durable = {t.id for u in users for t in store_of(mem).get_turns(u)}
        assert set(accepted) <= durable  # every acknowledged turn survived the kill
        ingest_all(mem)  # the client re-sends everything; ids make it idempotent

        for conv in load_locomo(LOCOMO_MINI):
            user = conv.sample_id
            turns = store_of(mem).get_turns(user)
            ids = [t.id for t in turns]
            assert len(ids) == len(set(ids)) == conv.turn_count
            assert all(t.status == TurnStatus.STORED for t in turns)
            seg_ids = sorted({t.segment_id for t in turns if t.segment_id})
            segments = store_of(mem).get_segments(user, seg_ids)
            assert {s.id for s in segments} == set(seg_ids)
            assert all(
                t.id in next(s for s in segments if s.id == t.segment_id).turn_ids for t in turns
            )
            summaries = store_of(mem).get_summaries(user)
            assert len({s.id for s in summaries}) == len(summaries)
            per_segment = Counter((s.segment_id, s.text) for s in summaries)
            assert max(per_segment.values()) == 1  # no summary written twice
            stats = mem.stats(user_id=user)
            active = stats["active_summaries"]  # repeats merged at write time are versions
            assert stats["pending_turns"] == 0 and active == len(summaries)
            assert mem.search(conv.sessions[0].turns[2].text, user_id=user, k=3, level="segment")

    # the crash changed nothing about what a clean run stores at Level-2
    clean = tmp_path / "clean"
    with Memory(clean, config=cfg, embedder=HashingEmbedder(64)) as ref:
        ingest_all(ref)
        expected = {
            u: (sorted({t.segment_id for t in store_of(ref).get_turns(u)}), ref.stats(user_id=u))
            for u in users
        }
    with Memory(store, config=cfg, embedder=HashingEmbedder(64)) as mem:
        for u in users:
            seg_ids, ref_stats = expected[u]
            assert sorted({t.segment_id for t in store_of(mem).get_turns(u)}) == seg_ids
            assert mem.stats(user_id=u)["segments"] == ref_stats["segments"]
