"""Issue #27 (2) on the LanceDB + Tantivy store: a storage fault between an import's commits
is rolled back (what the run wrote is withdrawn), so the store answers as before, and the
retry imports the file whole, also into a user an earlier interrupted import left partly
filled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import StorageFullError
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.store.store import Store
from hymem.manage import portable


def _open(folder: Path) -> Memory:
    config = MemoryConfig(llm="extractive", embedder="hashing")  # type: ignore[arg-type]
    return Memory(folder, config=config, embedder=HashingEmbedder(64))


def test_a_fault_between_commits_leaves_the_store_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "u.jsonl"
    with _open(tmp_path / "m") as mem:
        for i, said in enumerate(["I adopted a dog named Rex", "I moved to Lisbon in May"]):
            turns = [{"speaker": "Ann", "text": said}, {"speaker": "Bo", "text": "Nice"}]
            mem.add(turns, user_id="u", session_id=f"s{i}")
        mem.flush(user_id="u")
        exported = mem.export(out, user_id="u")
        assert exported.segments >= 2
        before = mem.stats()
        monkeypatch.setattr(portable, "COMMIT_SEGMENTS", 1)
        real = Store.commit_segments
        calls: list[int] = []

        def second_fails(self: Store, *args: Any, **kwargs: Any) -> None:
            calls.append(1)
            if len(calls) == 2:
                raise StorageFullError("injected: the disk is full")
            real(self, *args, **kwargs)

        monkeypatch.setattr(Store, "commit_segments", second_fails)
        with pytest.raises(StorageFullError):
            mem.import_records(out, user_id="v")
        assert mem.stats() == before
        assert mem.stats(user_id="v") == dict.fromkeys(mem.stats(user_id="v"), 0)
        assert mem.search("dog Rex", user_id="v") == []
        report = mem.import_records(out, user_id="v")  # the retry imports it whole
        assert (report.turns, report.segments, report.summaries) == (
            exported.turns,
            exported.segments,
            exported.summaries,
        )
        assert mem.stats(user_id="v")["pending_turns"] == 0


def _fail_commit(monkeypatch: pytest.MonkeyPatch, nth: int) -> None:
    real = Store.commit_segments
    calls: list[int] = []

    def fails(self: Store, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == nth:
            raise StorageFullError("injected: the disk is full")
        real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "commit_segments", fails)


def test_a_failed_resume_withdraws_only_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier import stopped after its first commit (a killed process: no roll back).
    A second run that fails part-way goes back to exactly that state; a third completes."""
    out = tmp_path / "u.jsonl"
    with _open(tmp_path / "m") as mem:
        for i in range(4):
            turns = [{"speaker": "Ann", "text": f"I visited city number {i} with Rex"}]
            mem.add(turns, user_id="u", session_id=f"s{i}")
        mem.flush(user_id="u")
        exported = mem.export(out, user_id="u")
        assert exported.segments >= 3
        monkeypatch.setattr(portable, "COMMIT_SEGMENTS", 1)
        with monkeypatch.context() as patch:
            _fail_commit(patch, 2)
            patch.setattr(Store, "withdraw", _killed)  # the process died: no roll back
            with pytest.raises(StorageFullError):
                mem.import_records(out, user_id="v")
        partial = mem.stats(user_id="v")
        assert partial["segments"] == 1 and partial["pending_turns"] > 0
        with monkeypatch.context() as patch:
            _fail_commit(patch, 2)  # the resume commits one more segment, then fails
            with pytest.raises(StorageFullError):
                mem.import_records(out, user_id="v")
        assert mem.stats(user_id="v") == partial
        report = mem.import_records(out, user_id="v")  # writes only what is missing
        assert report.segments == exported.segments - 1
        after = mem.stats(user_id="v")
        assert after["pending_turns"] == 0 and after["segments"] == exported.segments
        assert after["summaries"] == exported.summaries


def _killed(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError("the process is gone")
