"""The sleep journal's lines (`Storage.sleep_log()`), the same on every kind of store: a folder's
fsync'd file, an object store's table, the in-memory twin's list.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hymem.core.errors import StoreClosedError
from hymem.sleep.journal import JournalEntry, SleepJournal
from hymem.testing.records import StorageKit, commit_texts


def _line(user: str, n: int) -> str:
    return json.dumps({"user_id": user, "n": n})


class SleepLogTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    def test_lines_are_kept_in_order_per_user(self, storage_kit: StorageKit) -> None:
        log = storage_kit.store.sleep_log()
        log.append([("alice", _line("alice", 1)), ("bob", _line("bob", 1))])
        log.append([("alice", _line("alice", 2))])
        assert log.lines("alice") == [_line("alice", 1), _line("alice", 2)]
        assert log.lines("bob") == [_line("bob", 1)]
        assert log.lines() == [_line("alice", 1), _line("bob", 1), _line("alice", 2)]
        assert log.lines("nobody") == []

    def test_a_reader_sees_the_writers_lines(self, storage_kit: StorageKit) -> None:
        storage_kit.store.sleep_log().append([("alice", _line("alice", 1))])
        reader = storage_kit.open_reader()
        assert reader.sleep_log().lines("alice") == [_line("alice", 1)]

    def test_delete_user_removes_only_that_user_and_is_idempotent(
        self, storage_kit: StorageKit
    ) -> None:
        log = storage_kit.store.sleep_log()
        log.append([("alice", _line("alice", 1)), ("bob", _line("bob", 1))])
        log.delete_user("alice")
        log.delete_user("alice")
        assert log.lines() == [_line("bob", 1)]

    def test_erasing_a_user_deletes_their_sleep_lines(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        commit_texts(store, storage_kit.embedder, "alice", ["Alice adopted a cat"])
        commit_texts(store, storage_kit.embedder, "bob", ["Bob sold his bike"])
        store.sleep_log().append([("alice", _line("alice", 1)), ("bob", _line("bob", 1))])
        store.erase_user("alice")
        assert store.sleep_log().lines() == [_line("bob", 1)]

    def test_a_journal_over_the_log_reads_back_what_it_appended(
        self, storage_kit: StorageKit
    ) -> None:
        entry = JournalEntry(
            user_id="alice", target_id="t", key="k", action="ignore", at=datetime(2026, 1, 1)
        )
        SleepJournal(storage_kit.store.sleep_log()).append([entry])
        again = SleepJournal(storage_kit.store.sleep_log())
        assert again.lookup("k") == entry
        assert again.forget_user("alice") == 1 and again.lookup("k") is None

    def test_a_closed_store_has_no_log(self, storage_kit: StorageKit) -> None:
        storage_kit.store.close()
        with pytest.raises(StoreClosedError):
            storage_kit.store.sleep_log()


__all__ = ["SleepLogTests"]
