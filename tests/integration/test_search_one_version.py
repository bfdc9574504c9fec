"""A search's two branches read the store at two moments (the lexical branch looks its ids up
in a worker thread while the dense branch scans); a correction that commits between the two
reads must not make one search return the memory twice, its old version from one read beside
its new one from the other. Real LanceDB + Tantivy (and the dense cache, on and off); the
correction is committed for real at the exact moment between the two reads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.types import Level, SummaryStatus
from hymem.indexes.ports import Storage
from hymem.indexes.protocol import Row, RowScope, Vector
from hymem.search.hybrid import HybridSearcher
from hymem.search.scope import search_scope
from hymem.testing import embedder_of, store_of

from tests.fixtures_serve import hashing_memory

pytestmark = pytest.mark.integration

USER = "ann"
QUERY = "beagle Biscuit"
WAIT_S = 30.0


class Between:
    """The real store, with `correct` run between the two branches' reads: after the lexical
    branch looked its rows up and before the dense branch scans (`lexical_first`), or after
    the dense scan and before the lexical branch searches (`dense_first`). Every read itself
    is the real store's."""

    def __init__(self, store: Storage, correct: Callable[[], None], order: str) -> None:
        self._store, self._correct, self._order = store, correct, order
        self._first_read = threading.Event()
        self._corrected = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _between(self) -> None:
        """The correction, once, then the other branch may read."""
        if not self._corrected.is_set():
            self._correct()
            self._corrected.set()

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        rows = self._store.hydrate(user_id, level, ids)
        self._first_read.set()
        return rows

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        if self._order == "dense_first":
            assert self._corrected.wait(WAIT_S)
        return self._store.lexical_search(scope, text, k)

    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        if self._order == "lexical_first":
            assert self._first_read.wait(WAIT_S)
            self._between()
            return self._store.dense_rows(scope, vector, k)
        rows = self._store.dense_rows(scope, vector, k)
        self._between()
        return rows


@pytest.fixture(params=[64, 0], ids=["dense_cache", "no_dense_cache"])
def mem(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Memory]:
    config = MemoryConfig.defaults(
        llm="extractive", embedder="hashing", dense_cache_mb=request.param
    )
    with hashing_memory(tmp_path / "m", config) as memory:
        memory.add([{"speaker": "Ann", "text": "I adopted a beagle named Biscuit"}], user_id=USER)
        memory.add([{"speaker": "Ann", "text": "I sing in a choir on Tuesdays"}], user_id=USER)
        memory.flush(user_id=USER)
        yield memory


def _beagle(mem: Memory) -> str:
    return next(r.memory_id for r in mem.get_all(user_id=USER).items if "Biscuit" in r.text)


def _search_across(mem: Memory, order: str, correct: Callable[[], None]) -> list[Any]:
    searcher = HybridSearcher.from_config(
        Between(store_of(mem), correct, order), embedder_of(mem), mem.config
    )
    try:
        scope = search_scope(QUERY, user_id=USER, k=10)
        return searcher.find(QUERY, scope)
    finally:
        searcher.close()


@pytest.mark.parametrize("order", ["lexical_first", "dense_first"])
def test_an_update_between_the_two_reads_of_a_search_is_found_once_as_its_new_version(
    mem: Memory, order: str
) -> None:
    memory_id = _beagle(mem)
    made: list[str] = []

    def update() -> None:
        new = mem.update(memory_id, "Ann has a beagle named Biscuit now", user_id=USER)
        made.append(new.id)

    hits = _search_across(mem, order, update)
    assert made, "the correction did not run"
    found = [(h.id, h.status) for h in hits if h.memory_id == memory_id]
    assert found == [(made[0], SummaryStatus.ACTIVE)]


@pytest.mark.parametrize("order", ["lexical_first", "dense_first"])
def test_a_restore_between_the_two_reads_of_a_search_is_found_once_as_the_restored_version(
    mem: Memory, order: str
) -> None:
    """Restore makes an older version active again: the newest read, not the newest version,
    decides which one is served."""
    memory_id = _beagle(mem)
    second = mem.update(memory_id, "Ann has a beagle named Biscuit now", user_id=USER)

    def restore() -> None:
        mem.restore(memory_id, user_id=USER)  # version 1: its id is the memory's id

    hits = _search_across(mem, order, restore)
    found = [(h.id, h.status) for h in hits if h.memory_id == memory_id]
    assert found == [(memory_id, SummaryStatus.ACTIVE)]
    assert second.id != memory_id
