"""A backfill in its own process, for the test that kills one part-way
(`python -m tests.backfill_job FOLDER USERS MARKER`): synthetic users, hashing embedder, extractive
summariser, committed one user at a time."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from hymem import Memory, MemoryConfig
from hymem.backfill.histories import Session, UserHistory
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.ports import Storage

DIM = 64
PETS = ["cat", "dog", "parrot", "hamster", "tortoise", "ferret"]
PLACES = ["Lisbon", "Oslo", "Kyoto", "Lima", "Accra", "Perth"]


def histories(users: int, sessions: int = 3) -> list[UserHistory]:
    """Each user: a few sessions of facts that differ by user, with message ids on half of
    the sessions (the other half get content ids, as `add()` gives them)."""
    out = []
    for u in range(users):
        pet, place = PETS[u % len(PETS)], PLACES[(u * 5) % len(PLACES)]
        sess = []
        for s in range(sessions):
            lines = [
                f"User {u} has a {pet} named Bo{u}{s} who likes {place} in season {s}.",
                f"Sure, noted: the {pet} Bo{u}{s}.",
                f"Session {s}: user {u} plans a trip to {place} with a friend called Ana{u}.",
                f"Also, user {u} started learning the cello in week {s}.",
            ]
            msgs = [
                {"speaker": "user" if i % 2 == 0 else "assistant", "text": line}
                | ({"id": f"u{u}-s{s}-m{i}"} if s % 2 == 0 else {})
                for i, line in enumerate(lines)
            ]
            sess.append(Session(f"s{s}", msgs, f"2024-0{s + 1}-10T10:00:00"))
        out.append(UserHistory(f"user-{u:03d}", sess))
    return out


def snapshot(store: Storage, user: str) -> dict[str, Any]:
    """What a user's memory holds, without the times a run stamps on it."""
    turns = store.get_turns(user)
    summaries = store.get_summaries(user, statuses=None)
    seg_ids = sorted(
        {t.segment_id for t in turns if t.segment_id} | {s.segment_id for s in summaries}
    )
    return {
        "turns": [(t.id, t.seq, t.session_id, t.text, t.status.value, t.segment_id) for t in turns],
        "segments": [(s.id, s.turn_ids, s.text) for s in store.get_segments(user, seg_ids)],
        "summaries": sorted(
            (s.id, s.text, s.status.value, s.segment_id, tuple(s.source_turn_ids))
            for s in summaries
        ),
    }


def open_memory(folder: str, **kwargs: object) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(DIM), config=MemoryConfig.defaults(), **kwargs)


def paced(marker: str, after: int) -> Any:
    """A progress callback that writes `marker` once `after` users are committed, then slows
    the run down, so a test waiting for the marker kills the run part-way, every time."""
    done = [0]

    def progress(turns: int) -> None:
        done[0] += 1
        if done[0] == after:
            Path(marker).write_text("ready", encoding="utf-8")
        if done[0] >= after:
            time.sleep(0.3)

    return progress


if __name__ == "__main__":
    folder, users, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open_memory(folder) as mem:
        mem.backfill(histories(users), progress=paced(marker, after=3))
