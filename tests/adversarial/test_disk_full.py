"""Hardening, storage side: a full disk, injected at the storage seam where LanceDB, Tantivy and
Python's own writes report it, is a typed `StorageFullError`; a call that raises stored nothing
it did not report, and once space is back everything works with nothing lost or doubled."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem import Answer, Memory, MemoryConfig, StorageFullError
from hymem.core.types import StatusChange, SummaryStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.store.faults import is_disk_full
from hymem.testing import store_of

from tests.log_events import capture_events

pytestmark = pytest.mark.integration

LANCE_FULL = RuntimeError("lance error: IO error: No space left on device (os error 28)")
TANTIVY_FULL = ValueError("Failed to commit: An IO error occurred: 'No space left on device'")
MESSAGES = [
    {"role": "user", "content": "I adopted a beagle named Rex last spring"},
    {"role": "assistant", "content": "Beagles are wonderful, how is Rex doing?"},
    {"role": "user", "content": "He loves the beach near Lisbon"},
]


class Disk:
    """Makes chosen storage calls fail as a full disk would, until `free()`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full: set[str] = set()
        real_add, real_upsert = LanceTables.add, LanceTables.upsert
        real_commit = LexicalIndex.commit

        def check(name: str) -> None:
            if name in self.full:
                raise (
                    OSError(errno.ENOSPC, "No space left on device")
                    if name == S.TURNS
                    else (LANCE_FULL)
                )

        def add(lance: LanceTables, name: str, data: Any) -> None:
            check(name)
            real_add(lance, name, data)

        def upsert(lance: LanceTables, name: str, data: Any, on: Any) -> None:
            check(name)  # a version change writes its rows in one merge_insert
            real_upsert(lance, name, data, on)

        def commit(lex: LexicalIndex) -> None:
            if "tantivy" in self.full:
                raise TANTIVY_FULL
            real_commit(lex)

        monkeypatch.setattr(LanceTables, "add", add)
        monkeypatch.setattr(LanceTables, "upsert", upsert)
        monkeypatch.setattr(LexicalIndex, "commit", commit)

    def free(self) -> None:
        self.full.clear()


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Disk:
    return Disk(monkeypatch)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing:64")) as m:
        yield m


def test_full_disk_errors_are_recognised() -> None:
    assert is_disk_full(LANCE_FULL) and is_disk_full(TANTIVY_FULL)
    assert is_disk_full(OSError(errno.ENOSPC, "x")) and is_disk_full(OSError(errno.EDQUOT, "x"))
    assert not is_disk_full(RuntimeError("some other failure"))
    wrapped = RuntimeError("outer")
    wrapped.__cause__ = OSError(errno.ENOSPC, "inner")
    assert is_disk_full(wrapped)


def test_an_add_whose_turns_cannot_be_written_raises_and_stores_nothing(
    mem: Memory, disk: Disk
) -> None:
    """Before: a raw OSError, and a failing add() had stored its turn anyway."""
    disk.full.add(S.TURNS)
    with pytest.raises(StorageFullError, match="Free space and retry"):
        mem.add(MESSAGES, user_id="u", session_id="s")
    assert mem.stats(user_id="u")["turns"] == 0
    disk.free()
    mem.add(MESSAGES, user_id="u", session_id="s")
    assert mem.stats(user_id="u")["turns"] == 3


@pytest.mark.parametrize("where", [S.SUMMARIES, S.SEGMENTS, "tantivy"])
def test_a_commit_on_a_full_disk_keeps_the_turns_pending_then_completes(
    mem: Memory, disk: Disk, where: str
) -> None:
    mem.add(MESSAGES, user_id="u", session_id="s")
    disk.full.add(where)
    res = mem.flush(user_id="u")  # the turns are durable: reported, not raised
    assert res.error is not None and "full" in res.error and res.pending == 3
    assert [t.text for t in mem.pending(user_id="u")] == [m["content"] for m in MESSAGES]
    assert mem.search("beagle", user_id="u") == []  # no half-commit is served
    disk.free()
    res = mem.flush(user_id="u")
    assert res.error is None and res.pending == 0
    stats = mem.stats(user_id="u")
    assert stats["pending_turns"] == 0 and stats["segments"] == len(res.segments_written)
    assert stats["summaries"] == len(res.summaries_written)  # nothing doubled
    assert mem.search("beagle", user_id="u", mode="lexical")
    assert not (mem.path / "journal.json").exists()


def _outcome(answer: Answer) -> tuple[object, ...]:
    """What an ask found and said, without its ids and timings."""
    return (
        answer.text,
        answer.path,
        answer.complete,
        answer.iterations,
        [h.id for h in answer.evidence],
        answer.usage.total,
        answer.fallbacks,
    )


def test_a_full_disk_during_a_trace_never_fails_the_ask(mem: Memory, disk: Disk) -> None:
    """The ask on a full disk answers exactly as on a healthy one; only its trace row is lost,
    and the loss is logged, never raised."""
    question = "what is the dog called?"
    mem.add(MESSAGES, user_id="u", session_id="s")
    mem.flush(user_id="u")
    healthy = mem.ask(question, user_id="u")
    # an answer drawn from memory, not the reader's no-memory text (which is flagged)
    assert healthy.evidence and healthy.text and healthy.fallbacks == []
    assert [t.trace_id for t in mem.traces(user_id="u")] == [healthy.trace_id]  # written now
    disk.full.add(S.TRACES)
    with capture_events() as events:
        answer = mem.ask(question, user_id="u")
        written = {t.trace_id for t in mem.traces(user_id="u")}  # waits for the trace writer
    assert _outcome(answer) == _outcome(healthy)
    failed = [e for e in events if e["event"] == "ask.trace_failed"]
    assert [e["trace_id"] for e in failed] == [answer.trace_id]
    assert "No space left" in failed[0]["error"]
    assert written == {healthy.trace_id}  # the failed row is absent, the earlier one intact
    disk.free()
    again = mem.ask(question, user_id="u")
    assert again.trace_id in {t.trace_id for t in mem.traces(user_id="u")}


def test_sleep_changes_on_a_full_disk_raise_typed_and_retry_cleanly(
    mem: Memory, disk: Disk
) -> None:
    mem.add(MESSAGES, user_id="u", session_id="s")
    mem.flush(user_id="u")
    old = store_of(mem).get_summaries("u", with_vectors=True)[0]
    new = old.model_copy(update={"id": "v2", "text": "Rex is a beagle who loves Lisbon"})
    change = StatusChange(summary_id=old.id, status=SummaryStatus.SUPERSEDED, superseded_by="v2")
    disk.full.add(S.SUMMARIES)
    with pytest.raises(StorageFullError):
        store_of(mem).apply_summary_changes("u", [new], [change])
    assert store_of(mem).get_summaries("u", ids=["v2"]) == []  # nothing half-applied is served
    disk.free()
    store_of(mem).apply_summary_changes("u", [new], [change])
    assert [s.id for s in store_of(mem).get_summaries("u", ids=["v2"])] == ["v2"]
    assert store_of(mem).get_summaries("u", ids=[old.id], statuses=None)[0].status == "superseded"
    assert not (mem.path / "journal.json").exists()
