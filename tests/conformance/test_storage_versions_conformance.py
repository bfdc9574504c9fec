"""A memory's versions on every `Storage`: whatever the order or the interleaving of updates,
deletes and restores, a memory holds at most one active version (so `get_all` lists it and a
search finds it at most once), and a version change is a compare-and-swap on the versions its
writer read: a writer working from a read that is no longer current (the loser of a race) gets
`VersionConflictError` and writes nothing."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import CommitConflictError, VersionConflictError
from hymem.core.time import utcnow
from hymem.core.types import StatusChange, SummaryRecord, SummaryStatus
from hymem.indexes.ports import Storage
from hymem.manage.editor import Editor
from hymem.search.hybrid import HybridSearcher
from hymem.sleep.consolidator import Consolidator
from hymem.sleep.journal import SleepJournal
from hymem.write.guard import WriteGuard

from tests.doubles import ScriptedRoles
from tests.fixtures_store import StorageKit, make_segment, make_summary, make_turns

USER = "ann"
MEMORY = "m0"
QUERY = "beagle Biscuit"
ACTIVE, SUPERSEDED = SummaryStatus.ACTIVE, SummaryStatus.SUPERSEDED


def _seed(store: Storage) -> None:
    """One memory of one version, and a second memory the changes must leave alone."""
    store.append_turns(make_turns(USER, 2))
    for i, text in enumerate(["Ann keeps a beagle named Biscuit", "Ann sings in a choir"]):
        seg = make_segment(USER, f"seg{i}", turn_ids=[f"t{i}"])
        summ = make_summary(USER, f"m{i}", text, segment_id=seg.id, source_turn_ids=[f"t{i}"])
        store.commit_segments(USER, [seg], [summ], [f"t{i}"])


def _next(base: SummaryRecord, id_: str, text: str, version: int) -> SummaryRecord:
    return make_summary(
        USER,
        id_,
        text,
        segment_id=base.segment_id,
        memory_id=base.memory_id,
        version=version,
        previous_id=base.id,
        origin="user",
    )


def _retire(old: str, new: str) -> StatusChange:
    return StatusChange(summary_id=old, status=SUPERSEDED, superseded_by=new, reason="test")


def _states(store: Storage) -> dict[str, SummaryStatus]:
    rows = store.get_summaries(USER, memory_ids=[MEMORY], statuses=None)
    return {r.id: r.status for r in rows}


def _active(store: Storage) -> list[str]:
    return [r.id for r in store.get_summaries(USER, memory_ids=[MEMORY])]


@dataclass
class Writer:
    """What one writer corrects a memory with: its own guard (versions lock and right to
    write), the editor (update, delete) and the consolidator (restore)."""

    editor: Editor
    versions: Consolidator


def _writer(kit: StorageKit) -> Writer:
    guard = WriteGuard(kit.store)
    config = MemoryConfig.defaults()
    return Writer(
        Editor(kit.store, kit.embedder, guard=guard, clock=utcnow),
        Consolidator(
            kit.store,
            kit.embedder,
            ScriptedRoles,
            config,
            journal=SleepJournal(None),
            guard=guard,
        ),
    )


def _listed_and_found(kit: StorageKit, writer: Writer) -> tuple[int, int]:
    """How often `get_all` lists the memory and how often a search finds it."""
    listed = writer.editor.get_all(USER, limit=1000).items
    searcher = HybridSearcher(kit.store, kit.embedder)
    try:
        hits = searcher.search(QUERY, user_id=USER, k=50)
    finally:
        searcher.close()
    return (
        sum(r.memory_id == MEMORY for r in listed),
        sum(h.memory_id == MEMORY for h in hits),
    )


def test_a_change_from_a_stale_read_of_the_versions_is_refused_whole(
    storage_kit: StorageKit,
) -> None:
    store = storage_kit.store
    _seed(store)
    read = store.get_summaries(USER, memory_ids=[MEMORY], statuses=None)
    first = _next(read[0], "v-first", "Ann keeps a beagle named Biscuit, who is two", 2)
    store.apply_summary_changes(USER, [first], [_retire(MEMORY, first.id)], expect=read)
    assert _states(store) == {MEMORY: SUPERSEDED, first.id: ACTIVE}
    # A second writer that read the memory before the first change wrote: refused whole.
    late = _next(read[0], "v-late", "Ann keeps a beagle named Rex", 2)
    with pytest.raises(VersionConflictError) as refused:
        store.apply_summary_changes(USER, [late], [_retire(MEMORY, late.id)], expect=read)
    assert isinstance(refused.value, CommitConflictError) and MEMORY in str(refused.value)
    back = StatusChange(summary_id=MEMORY, status=ACTIVE)  # a stale restore, status only
    with pytest.raises(VersionConflictError):
        store.apply_summary_changes(USER, [], [back, _retire(first.id, MEMORY)], expect=read)
    assert _states(store) == {MEMORY: SUPERSEDED, first.id: ACTIVE}
    assert store.get_summaries(USER, ids=[late.id], statuses=None) == []
    assert [r.id for r in store.get_summaries(USER, memory_ids=["m1"])] == ["m1"]
    reader = storage_kit.open_reader()
    try:
        assert [r.id for r in reader.get_summaries(USER, memory_ids=[MEMORY])] == [first.id]
    finally:
        reader.close()
    # The same change made from a read of what is stored now goes in.
    fresh = store.get_summaries(USER, memory_ids=[MEMORY], statuses=None)
    again = _next(first, "v-again", "Ann keeps a beagle named Rex", 3)
    store.apply_summary_changes(USER, [again], [_retire(first.id, again.id)], expect=fresh)
    assert _active(store) == [again.id]


def test_restoring_a_version_and_then_the_tombstone_keeps_one_active_version(
    storage_kit: StorageKit,
) -> None:
    _seed(storage_kit.store)
    w = _writer(storage_kit)
    tomb = w.editor.delete(MEMORY, USER)
    assert _active(storage_kit.store) == []
    assert w.versions.restore(MEMORY, user_id=USER).status is ACTIVE  # undone by version 1
    assert _active(storage_kit.store) == [MEMORY]
    back = w.versions.restore(tomb.id, user_id=USER)  # and then by its tombstone
    assert back.id == tomb.id and back.status is ACTIVE
    assert _active(storage_kit.store) == [tomb.id]
    assert _listed_and_found(storage_kit, w) == (1, 1)
    # Every correction after it keeps exactly one active version.
    new = w.editor.update(MEMORY, "Ann keeps a beagle named Biscuit, who is two", USER)
    assert _active(storage_kit.store) == [new.id]
    w.versions.restore(MEMORY, user_id=USER)
    assert _active(storage_kit.store) == [MEMORY]
    with pytest.raises(VersionConflictError):
        w.versions.restore(MEMORY, user_id=USER)  # already its active version
    w.editor.delete(MEMORY, USER)
    with pytest.raises(VersionConflictError):
        w.editor.update(MEMORY, "Ann keeps a beagle named Rex", USER)  # deleted: restore first
    assert _active(storage_kit.store) == []
    assert _listed_and_found(storage_kit, w) == (0, 0)
    assert [r.id for r in storage_kit.store.get_summaries(USER, memory_ids=["m1"])] == ["m1"]


def test_racing_corrections_keep_one_active_version_and_the_losers_get_the_conflict(
    storage_kit: StorageKit,
) -> None:
    """Two writers that share no lock (as two workers would), two threads each, updating,
    deleting and restoring one memory; every step is checked as it ends."""
    store = storage_kit.store
    _seed(store)
    writers = [_writer(storage_kit), _writer(storage_kit)]
    rounds = 3 if storage_kit.kind == "s3" else 8
    failures: list[str] = []
    seen: list[int] = []
    done: list[str] = []

    def run(n: int) -> None:
        w, rnd = writers[n % 2], random.Random(n)
        for i in range(rounds):
            action = rnd.choice(["update", "delete", "restore"])
            try:
                if action == "update":
                    w.editor.update(MEMORY, f"Ann keeps a beagle named Biscuit {n}.{i}", USER)
                elif action == "delete":
                    w.editor.delete(MEMORY, USER)
                else:
                    versions = w.editor.versions(MEMORY, USER)
                    w.versions.restore(rnd.choice(versions).id, user_id=USER)
                done.append(action)
            except VersionConflictError:
                pass
            except Exception as exc:  # anything else fails the test
                failures.append(f"{action}: {type(exc).__name__}: {exc}")
            seen.append(len(_active(store)))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(seen) <= 1, seen
    assert failures == []
    assert done, "no correction went through"
    assert len(_active(store)) <= 1
    listed, found = _listed_and_found(storage_kit, writers[0])
    assert listed == len(_active(store)) and found <= 1
    assert [r.id for r in store.get_summaries(USER, memory_ids=["m1"])] == ["m1"]
