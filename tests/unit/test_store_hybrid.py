"""HybridSearcher logic over an InMemoryStore: fusion, hydration, orphans, modes, checks.

Dense rankings come from hand-made vectors and lexical ones from BM25 over short texts, so
each test states both rankings it feeds the fusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import UserInputError
from hymem.core.types import Level, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.protocol import Row, RowScope, Vector
from hymem.search.fusion import DEFAULT_RRF_K
from hymem.search.hybrid import (
    DEPTH_FACTOR,
    MIN_CANDIDATES,
    SEARCH_THREADS,
    HybridSearcher,
    candidate_depth,
)
from hymem.search.scope import SearchScope

from tests.fixtures_store import DIM, make_segment, make_summary, vec


class SpyStore(InMemoryStore):
    """Records what the searcher asks; `ghosts` are lexical ids the records no longer hold
    (a stale lexical index)."""

    def __init__(self, ghosts: Sequence[str] = ()) -> None:
        super().__init__(DIM, embedder_name="hashing-64")
        self.ghosts = list(ghosts)
        self.hydrate_calls: list[list[str]] = []
        self.dense_k: list[int] = []

    def dense_rows(self, scope: RowScope, vector: Vector, k: int) -> list[Row]:
        self.dense_k.append(k)
        return super().dense_rows(scope, vector, k)

    def lexical_search(self, scope: RowScope, text: str, k: int) -> list[tuple[str, float]]:
        found = super().lexical_search(scope, text, k)
        return [(g, 99.0) for g in self.ghosts] + found

    def hydrate(self, user_id: str, level: Level, ids: Sequence[str]) -> dict[str, Row]:
        self.hydrate_calls.append(list(ids))
        return super().hydrate(user_id, level, ids)


def _store(records: dict[str, tuple[str, list[float]]], ghosts: Sequence[str] = ()) -> SpyStore:
    """One summary per id (text, vector) in segment "seg-<id>", all for user "u"."""
    store = SpyStore(ghosts)
    sums = [
        make_summary("u", i, text, segment_id=f"seg-{i}", vector=v, start=datetime(2023, 1, 1))
        for i, (text, v) in records.items()
    ]
    segs = [make_segment("u", f"seg-{i}", turn_ids=["t1"]) for i in records]
    store.commit_segments("u", segs, sums, [])
    return store


def _searcher(store: InMemoryStore) -> HybridSearcher:
    return HybridSearcher(store, HashingEmbedder(DIM))


# dense (query vec(1.0)): a > b > c > d; lexical ("kiwi"): d > b
FRUIT = {
    "a": ("apple", vec(1.0)),
    "b": ("kiwi and other fruit", vec(1.0, 0.5)),
    "c": ("cherry", vec(1.0, 1.0)),
    "d": ("kiwi kiwi", vec(0.0, 1.0)),
}


def test_fusion_scores_ranks_and_one_hydration_for_lexical_hits() -> None:
    store = _store(FRUIT)
    hits = _searcher(store).find("kiwi", SearchScope("u", k=4), vec(1.0))
    assert [h.id for h in hits] == ["b", "d", "a", "c"]
    b, d = hits[0], hits[1]
    assert (b.dense_rank, b.lexical_rank) == (2, 2)
    assert b.dense_score == pytest.approx(1 / np.sqrt(1.25), abs=1e-6)
    assert b.lexical_score == pytest.approx(
        dict(store.lexical_search(RowScope("u"), "kiwi", 5))["b"]
    )
    assert b.fused_score == pytest.approx(2 / (DEFAULT_RRF_K + 2))
    assert b.segment_id == "seg-b" and b.status is SummaryStatus.ACTIVE and b.turn_ids == []
    assert (d.dense_rank, d.lexical_rank) == (4, 1)
    assert d.fused_score == pytest.approx(1 / (DEFAULT_RRF_K + 4) + 1 / (DEFAULT_RRF_K + 1))
    assert b.time_start == datetime(2023, 1, 1)
    assert store.hydrate_calls == [["d", "b"]]  # all lexical candidates, in one lookup


def test_orphan_lexical_ids_are_dropped_and_the_next_item_fills_in() -> None:
    store = _store(FRUIT, ghosts=["ghost"])
    hits = _searcher(store).find("kiwi", SearchScope("u", k=4), vec(1.0))
    assert "ghost" not in [h.id for h in hits]
    assert len(hits) == 4


def test_each_branch_fetches_a_deeper_candidate_list() -> None:
    assert candidate_depth(1) == 20 and candidate_depth(30) == 60
    store = _store({"a": ("apple", vec(1.0))})
    _searcher(store).search("q", user_id="u", k=15)
    assert store.dense_k == [30]


def test_candidate_depth_follows_the_config() -> None:
    cfg = MemoryConfig.defaults()
    assert (cfg.search_depth_factor, cfg.search_min_candidates, cfg.search_threads) == (
        DEPTH_FACTOR,
        MIN_CANDIDATES,
        SEARCH_THREADS,
    )
    store = _store({"a": ("apple", vec(1.0))})
    searcher = HybridSearcher(store, HashingEmbedder(DIM), depth_factor=3, min_candidates=50)
    searcher.search("q", user_id="u", k=10)
    searcher.search("q", user_id="u", k=20)
    searcher.close()
    assert store.dense_k == [50, 60]
    with pytest.raises(UserInputError, match="threads"):
        HybridSearcher(store, HashingEmbedder(DIM), threads=0)


def test_modes_use_only_their_branch() -> None:
    s = _searcher(_store({"a": ("apple", vec(1.0)), "b": ("kiwi", vec(-1.0, 0.1))}))
    dense = s.find("kiwi", SearchScope("u", k=5, mode="dense"), vec(1.0))
    assert [h.id for h in dense] == ["a", "b"] and all(h.lexical_rank is None for h in dense)
    lexical = s.find("kiwi", SearchScope("u", k=5, mode="lexical"), vec(1.0))
    assert [h.id for h in lexical] == ["b"] and lexical[0].dense_rank is None
    assert [h.id for h in s.search("kiwi", user_id="u", k=5, mode="lexical")] == ["b"]
    assert [h.id for h in s.find("kiwi", SearchScope("u", k=5, mode="lexical"))] == ["b"]


def test_segment_hits_link_to_themselves() -> None:
    store = InMemoryStore(DIM)
    store.commit_segments("u", [make_segment("u", "a", "we talked", turn_ids=["t1"])], [], [])
    hit = _searcher(store).search("talked", user_id="u", k=1, level="segment")[0]
    assert hit.level is Level.SEGMENT and hit.segment_id == "a" and hit.status is None
    assert hit.turn_ids == ["t1"]


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
        ({"since": datetime(2024, 1, 1), "until": datetime(2023, 1, 1)}, "starts after"),
        ({"since": datetime(2024, 1, 1), "as_of": "2023-06-01"}, "starts after"),
        ({"since": "2023"}, "since: unparseable"),
        ({"as_of": "not a date"}, "timestamp"),
        ({"agent_id": ""}, "agent_id"),
        ({"filters": {"bad key!": 1}}, "key"),
    ],
)
def test_bad_input_is_a_user_input_error(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"query": "q", "user_id": "u", "k": 3, **kwargs}
    with pytest.raises(UserInputError, match=match):
        _searcher(InMemoryStore(DIM)).search(args.pop("query"), **args)


def test_one_aware_and_one_naive_bound_compare_as_utc() -> None:
    """A naive bound is UTC and an aware one is converted, so a mixed range is no TypeError:
    04:00+05:00 is 23:00 UTC the day before, i.e. before a naive 01:00 though it reads later."""
    s = _searcher(_store(FRUIT))  # every record is dated 2023-01-01 00:00 UTC
    aware = datetime(2023, 1, 1, 4, 0, tzinfo=timezone(timedelta(hours=5)))
    naive = datetime(2023, 1, 1, 1, 0)
    hits = s.search("kiwi", user_id="u", k=5, since=aware, until=naive)
    assert sorted(h.id for h in hits) == ["a", "b", "c", "d"]
    with pytest.raises(UserInputError, match="starts after"):
        s.search("kiwi", user_id="u", k=5, since=naive, until=aware)


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(DIM)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super().embed(texts)


def test_find_embeds_the_query_only_without_a_given_vector() -> None:
    embedder = CountingEmbedder()
    s = HybridSearcher(_store(FRUIT), embedder)
    given = s.find("kiwi", SearchScope("u", k=4), vec(1.0))
    assert embedder.calls == []
    s.find("kiwi", SearchScope("u", k=4))
    s.find("kiwi", SearchScope("u", k=4, mode="lexical"))
    assert embedder.calls == [["kiwi"]]  # a lexical search needs no vector
    assert [h.id for h in given] == ["b", "d", "a", "c"]
    s.close()
