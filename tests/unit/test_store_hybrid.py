"""HybridSearcher logic against an in-memory fake store: fusion, hydration, orphans, checks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pytest
from hymem.config import MemoryConfig
from hymem.embedders import HashingEmbedder
from hymem.errors import UserInputError
from hymem.indexes.hybrid import (
    DEPTH_FACTOR,
    MIN_CANDIDATES,
    SEARCH_THREADS,
    HybridSearcher,
    candidate_depth,
)
from hymem.types import Level, SummaryStatus


class FakeStore:
    """Dense ranking = given order; lexical ranking = given order; records keyed by id."""

    def __init__(self, dense: list[str], lexical: list[str], records: dict[str, str]) -> None:
        self.dense, self.lexical, self.records = dense, lexical, records
        self.hydrate_calls: list[list[str]] = []
        self.dense_k: list[int] = []

    def _row(self, id_: str) -> dict[str, Any]:
        return {
            "id": id_,
            "user_id": "u",
            "text": self.records[id_],
            "segment_id": "seg-" + id_,
            "time_start": datetime(2023, 1, 1),
            "time_end": None,
            "status": "active",
            "turn_ids": ["t1"],
        }

    def dense_rows(self, user_id: str, vector: Sequence[float], k: int, **kw: Any) -> list[dict]:
        self.dense_k.append(k)
        return [{**self._row(i), "_distance": 0.1 * n} for n, i in enumerate(self.dense[:k])]

    def lexical_search(self, user_id: str, text: str, k: int, **kw: Any) -> list[tuple[str, float]]:
        return [(i, 10.0 - n) for n, i in enumerate(self.lexical[:k])]

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, dict]:
        self.hydrate_calls.append(list(ids))
        return {i: self._row(i) for i in ids if i in self.records}


def _searcher(store: FakeStore) -> HybridSearcher:
    return HybridSearcher(store, HashingEmbedder(16))  # type: ignore[arg-type]


def test_fusion_scores_ranks_and_one_hydration_for_lexical_only_hits() -> None:
    store = FakeStore(["a", "b", "c"], ["d", "b"], {i: i.upper() for i in "abcd"})
    hits = _searcher(store).search("anything", user_id="u", k=4)
    assert [h.id for h in hits] == ["b", "a", "d", "c"]
    b = hits[0]
    assert (b.dense_rank, b.lexical_rank) == (2, 2)
    assert b.dense_score == pytest.approx(0.9) and b.lexical_score == pytest.approx(9.0)
    assert b.fused_score == pytest.approx(2 / 62)
    assert b.segment_id == "seg-b" and b.status is SummaryStatus.ACTIVE and b.turn_ids == ["t1"]
    d = hits[2]
    assert d.dense_score is None and d.dense_rank is None and d.lexical_rank == 1
    assert store.hydrate_calls == [["d", "b"]]  # all lexical candidates, in one lookup


def test_orphan_lexical_ids_are_dropped_and_the_next_item_fills_in() -> None:
    store = FakeStore(["a", "b"], ["ghost", "c"], {"a": "A", "b": "B", "c": "C"})
    hits = _searcher(store).search("q", user_id="u", k=3)
    assert "ghost" not in [h.id for h in hits]
    assert len(hits) == 3


def test_each_branch_fetches_a_deeper_candidate_list() -> None:
    assert candidate_depth(1) == 20 and candidate_depth(30) == 60
    store = FakeStore(["a"], [], {"a": "A"})
    _searcher(store).search("q", user_id="u", k=15)
    assert store.dense_k == [30]


def test_candidate_depth_follows_the_config() -> None:
    cfg = MemoryConfig.defaults()
    assert (cfg.search_depth_factor, cfg.search_min_candidates, cfg.search_threads) == (
        DEPTH_FACTOR,
        MIN_CANDIDATES,
        SEARCH_THREADS,
    )
    store = FakeStore(["a"], [], {"a": "A"})
    searcher = HybridSearcher(store, HashingEmbedder(16), depth_factor=3, min_candidates=50)
    searcher.search("q", user_id="u", k=10)
    searcher.search("q", user_id="u", k=20)
    searcher.close()
    assert store.dense_k == [50, 60]
    with pytest.raises(UserInputError, match="threads"):
        HybridSearcher(store, HashingEmbedder(16), threads=0)


def test_modes_use_only_their_branch() -> None:
    store = FakeStore(["a"], ["b"], {"a": "A", "b": "B"})
    s = _searcher(store)
    assert [h.id for h in s.search("q", user_id="u", k=5, mode="dense")] == ["a"]
    assert [h.id for h in s.search("q", user_id="u", k=5, mode="lexical")] == ["b"]
    assert [h.id for h in s.search_vector(None, "q", user_id="u", k=5, mode="lexical")] == ["b"]


def test_segment_hits_link_to_themselves() -> None:
    store = FakeStore(["a"], [], {"a": "A"})
    hit = _searcher(store).search("q", user_id="u", k=1, level="segment")[0]
    assert hit.level is Level.SEGMENT and hit.segment_id == "a" and hit.status is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"query": "   "}, "query"),
        ({"query": ""}, "query"),
        ({"k": 0}, "k must be"),
        ({"k": -3}, "k must be"),
        ({"level": "paragraph"}, "unknown level"),
        ({"user_id": ""}, "user_id"),
        ({"user_id": None}, "user_id"),
        ({"mode": "fuzzy"}, "mode"),
        ({"time_range": (datetime(2024, 1, 1), datetime(2023, 1, 1))}, "starts after"),
        ({"time_range": ("2023", None)}, "datetimes"),
    ],
)
def test_bad_input_is_a_user_input_error(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"query": "q", "user_id": "u", "k": 3, **kwargs}
    store = FakeStore([], [], {})
    with pytest.raises(UserInputError, match=match):
        _searcher(store).search(args.pop("query"), **args)


def test_vector_required_unless_lexical() -> None:
    with pytest.raises(UserInputError):
        _searcher(FakeStore([], [], {})).search_vector(None, "q", user_id="u", k=1)
    vec = np.zeros(16, dtype=np.float32)
    assert _searcher(FakeStore([], [], {})).search_vector(vec, "q", user_id="u", k=1) == []
