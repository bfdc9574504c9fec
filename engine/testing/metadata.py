"""Metadata filters behave alike in every `Storage` (hymem runs the in-memory twin, the
LanceDB + Tantivy store with its dense cache, and with every dense query sent to LanceDB's
SQL), in the dense, lexical and hybrid branches, at both levels and through a read-only
handle: each returns exactly the records `Filter.matches`, the reference evaluator, accepts.
Hostile keys and values are literals that match only themselves.
"""

from __future__ import annotations

from typing import Any

import pytest
from hymem.core.filters import Filter
from hymem.core.types import Level, MetaValue
from hymem.indexes.ports import Storage
from hymem.indexes.protocol import RowScope
from hymem.search.hybrid import HybridSearcher
from hymem.testing.records import EVIL, StorageKit, make_segment, make_summary

DROP = '"); DROP TABLE summaries; --'


META: dict[str, dict[str, MetaValue]] = {
    "plain": {},
    "trip": {"topic": "travel", "year": 2021, "score": 0.5, "pinned": True, "agent_id": "a1"},
    "meal": {"topic": "food", "year": 2023, "score": 1.0, "pinned": False, "agent_id": "a2"},
    "digit": {"topic": "1", "year": 2023.5, "pinned": True, "run_id": "r1"},
    "evil": {"topic": EVIL, "year": -5, "note": DROP, "agent_id": "a1"},
    "odd": {"topic": "café ☕ \\ % _ * ' \"", "count": 1, "flag": "true"},
    "boolish": {"count": True, "year": 0.0, "run_id": "r1"},
    "huge": {"year": 2**53, "big": -1e300, "score": 1e-300},
}


CASES: list[dict[str, Any]] = [
    {"topic": "travel"},
    {"topic": EVIL},
    {"topic": "x"},
    {"note": DROP},
    {"topic": "café ☕ \\ % _ * ' \""},
    {"topic": "1"},
    {"topic": 1},
    {"count": 1},
    {"count": True},
    {"count": 1.0},
    {"flag": True},
    {"pinned": True},
    {"pinned": {"ne": True}},
    {"topic": {"in": ["travel", "food", EVIL]}},
    {"topic": {"nin": ["travel", "food"]}},
    {"year": {"gte": 2021, "lt": 2023}},
    {"year": {"gt": 2021}},
    {"year": {"lte": 0}},
    {"year": {"lt": 0}},
    {"year": {"gte": -5.0, "lte": -5}},
    {"year": {"gt": 2**53 - 1}},
    {"year": {"gt": 3000, "lt": 1000}},
    {"big": {"lt": -1e299}},
    {"score": {"gt": 0, "lt": 1e-200}},
    {"score": {"lte": 1}},
    {"agent_id": "a1"},
    {"agent_id": "a1", "year": {"gt": 0}},
    {"or": [{"agent_id": "a2"}, {"run_id": "r1"}]},
    {"and": [{"topic": {"ne": "travel"}}, {"or": [{"pinned": True}, {"year": {"lt": 0}}]}]},
    {"or": [{"missing": "x"}, {"year": {"gt": 1e9}}]},
    {"missing": {"ne": "x"}},
]


def _fill(store: Storage) -> None:
    """One segment and one summary per metadata dict, all about a walk by the lake."""
    for name, meta in META.items():
        text = f"a walk by the lake {name}"
        seg = make_segment("u", f"g-{name}", text).model_copy(update={"metadata": meta})
        summ = make_summary("u", name, text, segment_id=seg.id, metadata=meta)
        store.commit_segments("u", [seg], [summ], [])
    other = make_summary("v", "trip", "a walk by the lake trip", metadata=META["trip"])
    store.commit_segments("v", [make_segment("v", "g-trip", "a walk")], [other], [])


def _expected(f: Filter) -> set[str]:
    return {name for name, meta in META.items() if f.matches(meta)}


def _strip(level: Level, id_: str) -> str:
    """A hit's name: a segment's id without its "g-"."""
    return id_.removeprefix("g-") if level is Level.SEGMENT else id_


def _found(store: Storage, kit: StorageKit, level: Level, f: Filter) -> dict[str, set[str]]:
    """Names of what each branch returns for `f` (k past the number of records)."""
    query = kit.embedder.embed(["a walk by the lake"])[0]
    dense = store.dense_search(RowScope("u", level=level, filters=f), query, 50)
    lexical = store.lexical_search(RowScope("u", level=level, filters=f), "walk lake", 50)
    searcher = HybridSearcher(store, kit.embedder)
    try:
        hybrid = searcher.search("walk by the lake", user_id="u", k=50, level=level, filters=f)
    finally:
        searcher.close()
    assert all(h.metadata == META[_strip(level, h.id)] for h in hybrid)
    return {
        "dense": {_strip(level, i) for i, _ in dense},
        "lexical": {_strip(level, i) for i, _ in lexical},
        "hybrid": {_strip(level, h.id) for h in hybrid},
    }


class MetadataTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    @pytest.mark.parametrize("level", [Level.SUMMARY, Level.SEGMENT])
    def test_every_branch_returns_what_the_reference_evaluator_accepts(
        self, storage_kit: StorageKit, level: Level
    ) -> None:
        _fill(storage_kit.store)
        for raw in CASES:
            f = Filter.parse(raw)
            want = _expected(f)
            got = _found(storage_kit.store, storage_kit, level, f)
            assert got == {"dense": want, "lexical": want, "hybrid": want}, raw

    def test_a_reader_and_a_rebuilt_index_filter_alike(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _fill(store)
        store.reindex()
        reader = storage_kit.open_reader()
        for raw in CASES[::3]:
            f = Filter.parse(raw)
            want = _expected(f)
            for handle in (store, reader):
                got = _found(handle, storage_kit, Level.SUMMARY, f)
                assert got == dict.fromkeys(("dense", "lexical", "hybrid"), want), raw

    def test_metadata_round_trips_through_reads_rows_and_hydration(
        self, storage_kit: StorageKit
    ) -> None:
        store = storage_kit.store
        _fill(store)
        for handle in (store, storage_kit.open_reader()):
            got = {s.id: s.metadata for s in handle.get_summaries("u")}
            assert got == META
            assert all(type(v) is type(META[s][k]) for s, m in got.items() for k, v in m.items())
            seg = handle.get_segments("u", ["g-trip"])[0]
            assert seg.metadata == META["trip"]
            rows = handle.hydrate("u", Level.SUMMARY, ["evil", "plain"])
            assert rows["evil"]["metadata"] == META["evil"] and rows["plain"]["metadata"] == {}
            dense = handle.dense_rows(RowScope("u"), storage_kit.embedder.embed(["x"])[0], 50)
            assert {r["id"]: r["metadata"] for r in dense} == META

    def test_filters_never_cross_users_and_combine_with_status_and_time(
        self,
        storage_kit: StorageKit,
    ) -> None:
        store = storage_kit.store
        _fill(store)
        f = Filter.parse({"topic": "travel"})
        assert [i for i, _ in store.lexical_search(RowScope("v", filters=f), "walk lake", 10)] == [
            "trip"
        ]
        assert [i for i, _ in store.lexical_search(RowScope("u", filters=f), "walk lake", 10)] == [
            "trip"
        ]
        assert store.lexical_search(RowScope("u", statuses=[], filters=f), "walk lake", 10) == []
        far = (None, make_summary("u", "x", "x").time_start.replace(year=2000))  # type: ignore[union-attr]  # make_summary always sets time_start
        query = storage_kit.embedder.embed(["walk"])[0]
        assert store.dense_search(RowScope("u", time_range=far, filters=f), query, 10) == []


__all__ = ["MetadataTests"]
