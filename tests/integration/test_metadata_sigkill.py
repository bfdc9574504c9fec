"""A process adding turns with metadata is SIGKILLed mid-ingest; reopening, re-sending and
flushing stores every turn once with its own metadata, and every segment and summary holds the
one metadata dict its turns share, exactly as a clean run stores them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.types import TurnStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CHILD = textwrap.dedent(
    """
    import json, sys
    from hymem import Memory, MemoryConfig
    from hymem.embed.embedders import HashingEmbedder

    cfg = MemoryConfig.defaults(embedder="hashing", buffer_tokens=48)
    mem = Memory(sys.argv[1], config=cfg, embedder=HashingEmbedder(64))
    for msgs, meta in json.loads(open(sys.argv[2]).read()):
        res = mem.add(msgs, user_id="u", session_id="s1", metadata=meta, agent_id=meta["agent"])
        print("added", msgs[0]["id"], len(res.segments_written), flush=True)
    print("finished", flush=True)
    """
)
KILL_AFTER_COMMITS = 2
CFG = MemoryConfig.defaults(embedder="hashing", buffer_tokens=48)


def calls() -> list[tuple[list[dict[str, str]], dict[str, object]]]:
    """Forty two-turn calls whose metadata changes every three calls."""
    out = []
    for i in range(40):
        meta = {"agent": f"a{i // 3 % 2}", "batch": i // 3, "even": i // 3 % 2 == 0}
        msgs = [
            {
                "id": f"m{i}-{j}",
                "speaker": "AB"[j],
                "text": f"note {i} {j} about garden bed {i % 7}",
            }
            for j in range(2)
        ]
        out.append((msgs, meta))
    return out


def _resend_all(mem: Memory) -> None:
    for msgs, meta in calls():
        mem.add(msgs, user_id="u", session_id="s1", metadata=meta, agent_id=str(meta["agent"]))
    mem.flush(user_id="u")


def _stored(mem: Memory) -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]]]:
    """(turn id -> metadata, segment id -> metadata), after checking inheritance."""
    turns = store_of(mem).get_turns("u")
    assert all(t.status == TurnStatus.STORED for t in turns)
    by_turn = {t.id: t.metadata for t in turns}
    segments = store_of(mem).get_segments(
        "u", sorted({t.segment_id for t in turns if t.segment_id})
    )
    for seg in segments:
        assert {str(by_turn[t]) for t in seg.turn_ids} == {str(seg.metadata)}
    seg_meta = {s.id: s.metadata for s in segments}
    summaries = store_of(mem).get_summaries("u")
    assert len({s.id for s in summaries}) == len(summaries)
    assert all(s.metadata == seg_meta[s.segment_id] for s in summaries)
    return by_turn, seg_meta


def test_sigkill_mid_ingest_keeps_every_turns_metadata(tmp_path: Path) -> None:
    store = tmp_path / "mem"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    (tmp_path / "calls.json").write_text(json.dumps(calls()))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LANCEDB_LOG": "error"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(store), str(tmp_path / "calls.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    commits = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("added"):
            commits += int(line.split()[2]) > 0
            if commits >= KILL_AFTER_COMMITS:
                break
        elif line.startswith("finished"):
            pytest.fail("the child finished before it could be killed")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL and commits == KILL_AFTER_COMMITS

    with Memory(store, config=CFG, embedder=HashingEmbedder(64)) as mem:
        _resend_all(mem)
        turns, segments = _stored(mem)
    expected = {
        m["id"]: {**meta, "agent_id": meta["agent"]} for msgs, meta in calls() for m in msgs
    }
    assert turns == expected
    with Memory(tmp_path / "clean", config=CFG, embedder=HashingEmbedder(64)) as ref:
        _resend_all(ref)
        assert _stored(ref) == (turns, segments)
