"""A sharded store keeps its staleness bound with one parallel catch-up of the shards it
searches per `refresh_s`, not one catch-up per shard in the path of each search."""

from __future__ import annotations

from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.protocol import RowScope
from hymem.indexes.shards.placement import shard_of
from hymem.indexes.shards.router import ShardedStore

ONE_PER_SHARD = ("user0", "user4", "user3", "user1")  # shards 0, 1, 2, 3 of 4


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
    for user in ONE_PER_SHARD:
        store.dense_search(RowScope(user), vector, 5)
    assert [s.catch_ups for s in shards] == [0, 0, 0, 0]  # fresh when opened
    now[0] += 2.5
    for user in ONE_PER_SHARD:
        store.lexical_search(RowScope(user), "anything", 5)
    assert [s.catch_ups for s in shards] == [1, 1, 1, 1]  # one wave, not one per search
    now[0] += 1.0
    assert store.catch_up() == {"upserted": 4}  # forced: every shard, and the bound restarts
    now[0] += 1.5
    store.dense_rows(RowScope("user0"), vector, 5)
    assert [s.catch_ups for s in shards] == [2, 2, 2, 2]
    store.close()


def test_the_wave_catches_up_only_the_shards_this_process_searches() -> None:
    """A worker that writes (and so searches, for the consolidation's neighbours) two users
    must not catch up the store's every shard each interval: with 64 shards those reads
    doubled the requests per add (`benchmarks/RESULTS.md`, issue 31)."""
    now = [100.0]
    shards = [CountingStore() for _ in range(4)]
    store = ShardedStore("memory://s", shards, read_only=False, refresh_s=2.0, clock=lambda: now[0])
    vector = [1.0] + [0.0] * 7
    mine = ("user0", "user3")
    assert {shard_of(u, 4) for u in mine} == {0, 2}
    for user in mine:
        store.dense_search_many(RowScope(user), [vector], 5)
    now[0] += 2.5
    store.dense_search_many(RowScope("user0"), [vector], 5)
    assert [s.catch_ups for s in shards] == [1, 0, 1, 0]
    store.close()


def test_without_a_bound_the_router_never_catches_up_on_its_own() -> None:
    shards = [CountingStore() for _ in range(2)]
    store = ShardedStore("memory://s", shards, read_only=False)
    store.dense_search(RowScope("a"), [1.0] + [0.0] * 7, 5)
    assert [s.catch_ups for s in shards] == [0, 0]
    store.close()
