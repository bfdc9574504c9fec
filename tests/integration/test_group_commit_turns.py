"""Concurrent adds of one process share LanceDB commits of the turns table (group commit),
and each caller still gets exactly its own turns stored once."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

pytestmark = pytest.mark.integration

USERS = [f"u{i}" for i in range(8)]


def _message(user: str) -> dict[str, str]:
    return {"role": "user", "content": f"{user} keeps bees.", "id": f"{user}-m1"}


def test_adds_arriving_during_a_commit_share_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: each add was its own LanceDB commit, one at a time behind the write lock (on
    an object store ~180 ms each), so a worker serving many users wrote one add per commit."""
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    with Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64), create=True) as mem:
        mem.add("warm up", user_id="warm")
        tables = store_of(mem).tables
        real_add = tables.add
        turn_commits: list[int] = []
        first = threading.Event()

        def slow_add(name: str, data: Any) -> None:
            if name == "turns":
                turn_commits.append(data.num_rows)
                if len(turn_commits) == 1:
                    first.set()
                    time.sleep(0.5)  # a commit in flight, as on an object store
            real_add(name, data)

        monkeypatch.setattr(tables, "add", slow_add)
        errors: list[BaseException] = []

        def add(user: str) -> None:
            try:
                mem.add(_message(user), user_id=user)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=add, args=(USERS[0],))]
        threads[0].start()
        assert first.wait(10)
        threads += [threading.Thread(target=add, args=(u,)) for u in USERS[1:]]
        for t in threads[1:]:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == []
        assert len(turn_commits) < len(USERS)  # later adds rode on shared commits
        assert sum(turn_commits) == len(USERS)
        for user in USERS:
            pending = mem.pending(user_id=user)
            assert [t.text for t in pending] == [f"{user} keeps bees."]  # stored once each
        mem.add(_message(USERS[1]), user_id=USERS[1])
        assert len(mem.pending(user_id=USERS[1])) == 1  # a retried message is not stored twice


def test_close_waits_for_an_add_in_flight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ingestor's lock is released around the append; closing must still wait for the
    add to finish (else the store closes under it and an accepted turn's add fails)."""
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    mem = Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64), create=True)
    tables = store_of(mem).tables
    real_add = tables.add
    in_commit = threading.Event()

    def slow_add(name: str, data: Any) -> None:
        if name == "turns":
            in_commit.set()
            time.sleep(0.5)
        real_add(name, data)

    monkeypatch.setattr(tables, "add", slow_add)
    outcome: list[object] = []

    def add() -> None:
        try:
            outcome.append(mem.add(_message("u0"), user_id="u0"))
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=add)
    worker.start()
    assert in_commit.wait(10)
    mem.close()
    worker.join(10)
    assert len(outcome) == 1 and not isinstance(outcome[0], BaseException), outcome
    monkeypatch.undo()
    with Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64)) as again:
        assert [t.text for t in again.pending(user_id="u0")] == ["u0 keeps bees."]
