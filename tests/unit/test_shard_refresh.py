"""A sharded store keeps its staleness bound with one parallel catch-up of every shard per
`refresh_s`, not one catch-up per shard in the path of each search."""

from __future__ import annotations

from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.protocol import RowScope
from hymem.indexes.shards.router import ShardedStore


class CountingStore(InMemoryStore):
    """The in-memory twin, counting forced catch-ups."""

    def __init__(self) -> None:
        super().__init__(8)
        self.catch_ups = 0

    def catch_up(self) -> dict[str, int]:
        self.catch_ups += 1
        return {"upserted": 1}


def test_every_shard_catches_up_once_per_refresh_interval() -> None:
    now = [100.0]
    shards = [CountingStore() for _ in range(4)]
    store = ShardedStore("memory://s", shards, read_only=False, refresh_s=2.0, clock=lambda: now[0])
    vector = [1.0] + [0.0] * 7
    for user in ("a", "b", "c", "d"):
        store.dense_search(RowScope(user), vector, 5)
    assert [s.catch_ups for s in shards] == [0, 0, 0, 0]  # fresh when opened
    now[0] += 2.5
    for user in ("a", "b", "c", "d"):
        store.lexical_search(RowScope(user), "anything", 5)
    assert [s.catch_ups for s in shards] == [1, 1, 1, 1]  # one wave, not one per search
    now[0] += 1.0
    assert store.catch_up() == {"upserted": 4}  # forced: every shard, and the bound restarts
    now[0] += 1.5
    store.dense_rows(RowScope("a"), vector, 5)
    assert [s.catch_ups for s in shards] == [2, 2, 2, 2]
    store.close()


def test_without_a_bound_the_router_never_catches_up_on_its_own() -> None:
    shards = [CountingStore() for _ in range(2)]
    store = ShardedStore("memory://s", shards, read_only=False)
    store.dense_search(RowScope("a"), [1.0] + [0.0] * 7, 5)
    assert [s.catch_ups for s in shards] == [0, 0]
    store.close()
