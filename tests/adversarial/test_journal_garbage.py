"""A `journal.json` that cannot be read is an unfinished commit of unknown content.

The writer settles it by the rows' own state: rows that are complete and consistent stay; a
segment none of whose turns was marked stored (its commit never finished) goes, with its
summaries; stored turns whose segment is gone are pending again; summaries whose segment is gone
go (the pending turns bring them back). The lexical index is rebuilt. Each case is a real
commit interrupted by an injected fault, its journal then overwritten with garbage."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hymem.core.types import StatusChange, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.lance import schema as S
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.commits import CommitWriter
from hymem.indexes.store.recovery import Recovery
from hymem.indexes.store.store import Store

from tests.fixtures_store import (
    DIM,
    assert_store_consistent,
    commit_texts,
    make_records,
    make_turns,
    open_store,
)
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

JOURNALS = [b"\x00garbage{", b"[1, 2]", b'{"op": "commit_segments"}', b'{"op": "rename_moon"}']


class Injected(OSError):
    pass


def _fail(*_: Any, **__: Any) -> None:
    raise Injected("injected fault")


def _dies(*_: Any, **__: Any) -> None:
    """In place of the in-process rollback: the process died before it could run."""


Inject = Callable[[Store, pytest.MonkeyPatch], None]


def _settled_store(folder: Path, journal: bytes) -> tuple[Store, list[dict[str, Any]]]:
    (folder / "journal.json").write_bytes(journal)
    with capture_events() as events:
        store = open_store(folder, HashingEmbedder(DIM))
    return store, events


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """One finished commit (g0 over t0, t1: acknowledged, must survive) and two pending turns."""
    emb = HashingEmbedder(DIM)
    with open_store(tmp_path / "m", emb) as store:
        store.append_turns(make_turns("u", 4, prefix="t"))
        commit_texts(store, emb, "u", ["zq0a kept fact"], segment_id="g0", turn_ids=["t0", "t1"])
    return tmp_path / "m"


def _interrupted_commit(folder: Path, inject: Inject, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commit g1 over t2, t3 with `inject` making it fail part-way, then close; the faults
    end with this store, so the next open is a clean process's."""
    emb = HashingEmbedder(DIM)
    store = open_store(folder, emb)
    with monkeypatch.context() as patch:
        inject(store, patch)
        # as if the process died right after the failure: no in-process rollback runs
        patch.setattr(Recovery, "after_failure", _dies)
        with pytest.raises(Injected):
            commit_texts(store, emb, "u", ["zq1a new fact"], segment_id="g1", turn_ids=["t2", "t3"])
        store.close()


def _before_turn_status(store: Store, patch: pytest.MonkeyPatch) -> None:
    patch.setattr(LexicalIndex, "commit", _fail)  # rows in, turns not yet stored


def _before_summaries(store: Store, patch: pytest.MonkeyPatch) -> None:
    real_add = store.tables.add

    def add(name: str, data: Any) -> None:
        if name == S.SUMMARIES:
            raise Injected("injected fault")
        real_add(name, data)

    patch.setattr(store.tables, "add", add)


@pytest.mark.parametrize("journal", JOURNALS)
@pytest.mark.parametrize("inject", [_before_turn_status, _before_summaries])
def test_unfinished_commit_is_rolled_back_by_its_rows(
    folder: Path, journal: bytes, inject: Inject, monkeypatch: pytest.MonkeyPatch
) -> None:
    _interrupted_commit(folder, inject, monkeypatch)
    store, events = _settled_store(folder, journal)
    with store:
        counts = store.counts("u")
        assert (counts["segments"], counts["summaries"], counts["pending_turns"]) == (1, 1, 2)
        assert [i for i, _ in store.lexical_search(RowScope("u"), "zq0a", 5)] == ["g0-s0"]
        assert_store_consistent(store)
        # the next flush redoes it once
        emb = HashingEmbedder(DIM)
        for _ in range(2):
            commit_texts(store, emb, "u", ["zq1a new fact"], segment_id="g1", turn_ids=["t2", "t3"])
        assert store.counts("u")["segments"] == 2 and store.counts("u")["summaries"] == 2
        assert_store_consistent(store)
    settled = [e for e in events if e["event"] == "store.journal_settled"]
    assert settled and settled[0]["rolled"] == "by_rows" and settled[0]["segments_removed"] == 1


def test_stored_turns_whose_segment_vanished_are_pending_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-commit of g0 that deleted g0's segment, then died before deleting its summaries."""
    emb = HashingEmbedder(DIM)
    store = open_store(folder, emb)
    with monkeypatch.context() as patch:
        patch.setattr(CommitWriter, "delete_summaries", _fail)
        with pytest.raises(Injected):
            commit_texts(
                store, emb, "u", ["zq0a kept fact"], segment_id="g0", turn_ids=["t0", "t1"]
            )
        store.close()
    store, events = _settled_store(folder, b"\xff\xfe")
    with store:
        counts = store.counts("u")
        assert (counts["segments"], counts["summaries"], counts["pending_turns"]) == (0, 0, 4)
        assert_store_consistent(store)
    settled = next(e for e in events if e["event"] == "store.journal_settled")
    assert (settled["turns_pending"], settled["summaries_removed"]) == (2, 1)


def test_interrupted_status_change_keeps_both_complete_versions(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashingEmbedder(DIM)
    store = open_store(folder, emb)
    _, (new,) = make_records(emb, "u", ["zq0b newer fact"], segment_id="g0", id_prefix="v2-")
    with monkeypatch.context() as patch:
        patch.setattr(LexicalIndex, "commit", _fail)  # after the LanceDB commit (both rows)
        patch.setattr(Recovery, "after_failure", _dies)
        with pytest.raises(Injected):
            store.apply_summary_changes(
                "u", [new], [StatusChange(summary_id="g0-s0", status=SummaryStatus.SUPERSEDED)]
            )
        store.close()
    store, _ = _settled_store(folder, b"")
    with store:
        assert {s.id for s in store.get_summaries("u", statuses=None)} == {"g0-s0", new.id}
        assert [s.id for s in store.get_summaries("u")] == [new.id]
        assert [i for i, _ in store.lexical_search(RowScope("u"), "zq0b", 5)] == [new.id]
        assert store.counts("u")["pending_turns"] == 2
        assert_store_consistent(store)


def test_garbage_journal_on_a_clean_store_changes_no_row(folder: Path) -> None:
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as reader:
        before = reader.counts()
    store, events = _settled_store(folder, b"garbage")
    with store:
        assert store.counts() == before
        assert_store_consistent(store)
    assert any(e["event"] == "store.journal_unreadable" for e in events)


def test_a_reader_opens_beside_a_garbage_journal(folder: Path) -> None:
    (folder / "journal.json").write_bytes(b"garbage")
    with open_store(folder, HashingEmbedder(DIM), read_only=True) as reader:
        assert [i for i, _ in reader.lexical_search(RowScope("u"), "zq0a", 5)] == ["g0-s0"]
    assert (folder / "journal.json").read_bytes() == b"garbage"
