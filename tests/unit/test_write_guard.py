"""`WriteGuard`: one object for a user's writes -- the store's per-user right to write, the
caches its components drop when that right comes back stale, and the versions lock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hymem.indexes.memory.store import InMemoryStore
from hymem.write.guard import WriteGuard

from tests.fixtures_store import DIM


class LeasedStore(InMemoryStore):
    """Says "stale" for the users another worker wrote since; records what was held."""

    def __init__(self, stale: set[str]) -> None:
        super().__init__(DIM)
        self.stale = stale
        self.held: list[str] = []

    @contextmanager
    def writing(self, user_id: str) -> Iterator[bool]:
        self.held.append(user_id)
        yield user_id in self.stale


def test_stale_users_have_every_registered_cache_dropped_first() -> None:
    store = LeasedStore(stale={"bob"})
    guard = WriteGuard(store)
    dropped: list[tuple[str, str]] = []
    guard.on_stale(lambda user: dropped.append(("ingestor", user)))
    guard.on_stale(lambda user: dropped.append(("journal", user)))
    with guard.writing("alice") as stale:
        assert stale is False and dropped == []
    with guard.writing("bob") as stale:
        assert stale is True
        assert dropped == [("ingestor", "bob"), ("journal", "bob")]
    assert store.held == ["alice", "bob"]


def test_a_read_only_store_holds_nothing() -> None:
    """The store is not asked (a read-only store's `writing` raises): the write inside the
    block raises the store's own typed error instead."""
    guard = WriteGuard(InMemoryStore(DIM).read_only_view())
    with guard.writing("bob") as stale:
        assert stale is False


def test_versions_hold_the_lock_then_the_lease_and_are_reentrant() -> None:
    store = LeasedStore(stale=set())
    guard = WriteGuard(store)
    others: list[bool] = []
    with guard.versions("alice"):
        with guard.versions("alice"):  # a correction inside a management call
            assert store.held == ["alice", "alice"]
        other = threading.Thread(
            target=lambda: others.append(guard.versions_lock.acquire(timeout=0.05))
        )
        other.start()
        other.join()
    assert others == [False]  # no other thread changes versions meanwhile
