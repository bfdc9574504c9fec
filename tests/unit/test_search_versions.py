"""One version per memory in a search's results (`hymem.search.versions`, pure), and the light
path of the reader keeping it when its reads straddle a correction.

The rows here stand for what two reads of the store returned, one before and one after a
correction committed: each read alone holds one active version of a memory; together they hold
two, and the newest read decides which is served."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest
from hymem.core.types import Hit, Level, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.protocol import Row, RowScope, Vector
from hymem.search.hybrid import HybridSearcher
from hymem.search.scope import SearchScope
from hymem.search.versions import (
    first_version_each,
    keeps_one_version,
    one_version_each,
    shared_memories,
)

from tests.doubles_retrieval import FakeSearcher
from tests.fixtures_reader import ReaderFakes, make_fakes, summary_hit
from tests.fixtures_store import DIM, make_segment, make_summary, vec

CURRENT = RowScope("u")


def _row(item: str, memory: str | None, status: str = "active") -> Row:
    return {"id": item, "memory_id": memory, "status": status, "text": item}


class Rereads:
    """The newest read: the rows it admits, and every batch of ids it was asked for."""

    def __init__(self, rows: Mapping[str, Row]) -> None:
        self.rows = dict(rows)
        self.calls: list[list[str]] = []

    def __call__(self, ids: Sequence[str]) -> dict[str, Row]:
        self.calls.append(list(ids))
        return {i: self.rows[i] for i in ids if i in self.rows}


def test_ids_that_share_a_memory_are_found_in_rank_order() -> None:
    rows = {"a2": _row("a2", "a"), "b": _row("b", "b"), "a1": _row("a1", "a"), "c": _row("c", None)}
    assert shared_memories(["a2", "b", "ghost", "a1", "c"], rows) == ["a2", "a1"]
    # a row without a memory id is a memory of its own, even one named like another's id
    assert shared_memories(["c", "x"], {"c": _row("c", None), "x": _row("x", "c")}) == ["c", "x"]


def test_each_memory_keeps_its_best_ranked_version_and_orphans_pass() -> None:
    rows = {"a2": _row("a2", "a"), "a1": _row("a1", "a"), "b": _row("b", "b")}
    ranking = [("a2", 0.9), ("ghost", 0.8), ("b", 0.7), ("a1", 0.6)]
    assert first_version_each(ranking, rows) == [("a2", 0.9), ("ghost", 0.8), ("b", 0.7)]


def test_an_update_read_on_both_sides_keeps_the_new_version_only() -> None:
    """The old version ranked first came from the read before the update; the newest read
    holds it retired and its successor active."""
    seen = {"a1": _row("a1", "a"), "a2": _row("a2", "a"), "b": _row("b", "b")}
    newest = Rereads({"a2": _row("a2", "a")})
    ranking = [("a1", 0.9), ("b", 0.8), ("a2", 0.7)]
    kept, rows = one_version_each(CURRENT, ranking, seen, newest)
    assert kept == [("b", 0.8), ("a2", 0.7)]
    assert newest.calls == [["a1", "a2"]]  # one read, of the shared ones only
    assert "a1" not in rows and rows["a2"] is newest.rows["a2"]


def test_a_restore_read_on_both_sides_keeps_the_restored_older_version() -> None:
    """Restore makes an older version active again: not the newest version but the one the
    newest read holds active is served."""
    seen = {"a2": _row("a2", "a"), "a1": _row("a1", "a")}
    kept, _ = one_version_each(CURRENT, [("a2", 0.9), ("a1", 0.5)], seen, Rereads(seen))
    assert kept == [("a2", 0.9)]  # both active again: the best ranked (a store's old data)
    newest = Rereads({"a1": _row("a1", "a")})
    kept, rows = one_version_each(CURRENT, [("a2", 0.9), ("a1", 0.5)], seen, newest)
    assert kept == [("a1", 0.5)] and set(rows) == {"a1"}


def test_a_memory_deleted_between_the_reads_is_not_served() -> None:
    seen = {"a1": _row("a1", "a"), "a2": _row("a2", "a")}
    kept, rows = one_version_each(CURRENT, [("a1", 0.9), ("a2", 0.5)], seen, Rereads({}))
    assert kept == [] and rows == {}


def test_nothing_is_read_again_without_two_versions_of_one_memory() -> None:
    seen = {"a1": _row("a1", "a"), "b": _row("b", "b")}
    newest = Rereads({})
    kept, rows = one_version_each(CURRENT, [("a1", 0.9), ("ghost", 0.5), ("b", 0.2)], seen, newest)
    assert kept == [("a1", 0.9), ("ghost", 0.5), ("b", 0.2)] and rows == seen
    assert newest.calls == []


@pytest.mark.parametrize(
    "scope",
    [
        RowScope("u", statuses=None),  # include_inactive: every version is asked for
        RowScope("u", valid_at=datetime(2024, 1, 1)),  # as_of: what was true then, too
        RowScope("u", level=Level.SEGMENT),
    ],
    ids=["include_inactive", "as_of", "segments"],
)
def test_searches_for_several_versions_are_left_as_they_are(scope: RowScope) -> None:
    seen = {"a1": _row("a1", "a", "superseded"), "a2": _row("a2", "a")}
    newest = Rereads({})
    assert not keeps_one_version(scope)
    kept, rows = one_version_each(scope, [("a1", 0.9), ("a2", 0.5)], seen, newest)
    assert kept == [("a1", 0.9), ("a2", 0.5)] and rows == seen and newest.calls == []


def test_every_search_scope_of_current_summaries_keeps_one_version() -> None:
    assert keeps_one_version(SearchScope("u").rows())
    assert not keeps_one_version(SearchScope("u", include_inactive=True).rows())


# ---- HybridSearcher.find over the in-memory store -----------------------------------------------


class MovedUnderTheScan(InMemoryStore):
    """Its dense rows for `moved` say what a read of the row after the scan saw: superseded
    (a cached scan picks the rows, then reads them, and a correction can commit between)."""

    moved: frozenset[str] = frozenset()

    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        rows = super().dense_rows(scope, vector, k)
        return [{**r, "status": "superseded"} if r["id"] in self.moved else r for r in rows]


def _fruit_store(**memory_of: str) -> MovedUnderTheScan:
    """Summaries a, b, c of user "u" (dense order a > b > c for vec(1.0)), each its own memory
    unless `memory_of` names another's."""
    store = MovedUnderTheScan(DIM, embedder_name="hashing-64")
    texts = {
        "a": ("apple kiwi", vec(1.0)),
        "b": ("kiwi", vec(1.0, 0.5)),
        "c": ("cherry", vec(0.0, 1.0)),
    }
    sums = [
        make_summary("u", i, text, segment_id=f"seg-{i}", vector=v, memory_id=memory_of.get(i, i))
        for i, (text, v) in texts.items()
    ]
    store.commit_segments("u", [make_segment("u", f"seg-{i}") for i in texts], sums, [])
    return store


def _find(store: InMemoryStore, **scope: Any) -> list[Hit]:
    searcher = HybridSearcher(store, HashingEmbedder(DIM))
    try:
        return searcher.find("kiwi", SearchScope("u", **scope), vec(1.0))
    finally:
        searcher.close()


def test_a_dense_row_read_retired_after_its_scan_is_not_served() -> None:
    store = _fruit_store()
    store.moved = frozenset({"a"})
    assert [h.id for h in _find(store)] == ["b", "c"]


def test_a_store_holding_two_active_versions_of_a_memory_is_searched_with_one() -> None:
    """Two versions both active in every read (data written before a memory was kept at one
    active version): the best-ranked one is served, the other left out, k still filled."""
    store = _fruit_store(b="a")
    assert [(h.id, h.memory_id) for h in _find(store, k=2)] == [("a", "a"), ("c", "c")]
    every = _find(store, include_inactive=True)
    assert sorted(h.id for h in every) == ["a", "b", "c"]


# ---- the reader's light path ------------------------------------------------------------------


class CorrectedBetweenReads(FakeSearcher):
    """Serves the rows of the store before a correction to the first read, and after it to
    every later one: version `old` of memory "m" is active before, `new` after (each read
    admits active rows only, as `HybridSearcher.rows` does)."""

    def __init__(self, hits: list[Hit], old: str, new: str) -> None:
        super().__init__(hits)
        self.old, self.new, self.reads = old, new, 0

    def rows(self, scope: SearchScope, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        self.reads += 1
        gone = self.new if self.reads == 1 else self.old
        return {i: r for i, r in super().rows(scope, ids).items() if i != gone}


def _light(fakes: ReaderFakes, question: str) -> list[Hit]:
    return fakes.reader().context(fakes.params(question, depth="light"))


def test_the_light_path_serves_a_memory_corrected_between_its_reads_once() -> None:
    """Its hybrid pool is read first (the old version active), its aspect list after (the new
    one active): the fused light ranking holds both unless the memory is read again."""
    named = [
        summary_hit(i).model_copy(update={"text": f"Ann said thing {i}", "turn_ids": [f"t{i}"]})
        for i in range(6)
    ]
    old = named[0].model_copy(update={"memory_id": "m", "id": "m"})
    new = named[1].model_copy(
        update={"memory_id": "m", "id": "m-v2", "text": "Ann said thing 0, corrected"}
    )
    fakes = make_fakes()
    fakes.searcher = CorrectedBetweenReads([old, new, *named[2:]], old="m", new="m-v2")
    hits = _light(fakes, "What did Ann say?")
    assert fakes.searcher.reads >= 2  # the pool's read, and the aspect's after it
    assert [(h.id, h.status) for h in hits if h.memory_id == "m"] == [
        ("m-v2", SummaryStatus.ACTIVE)
    ]
