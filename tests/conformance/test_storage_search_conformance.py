"""One behavioural suite for every `Storage`, search half: dense and lexical ordering, filters
by status and time (naive-UTC and aware bounds alike), hydration, and a cross-check that the
in-memory BM25 scores what Tantivy scores.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store
from hymem.testing import DIM, SearchTests, make_segment, make_summary


class TestSearch(SearchTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""


def test_in_memory_bm25_scores_what_tantivy_scores(make_store: Callable[..., Store]) -> None:
    """Not per store: both at once, so a test written against InMemoryStore ranks (and scores)
    as it would on disk."""
    real, memory = make_store(), InMemoryStore(DIM, embedder_name="hashing-64")
    texts = [
        "Caroline went to the LGBTQ support group on 7 May 2023",
        "Melanie painted a sunrise over the lake",
        "Caroline is researching adoption agencies",
        "support group support group meeting every week for support",
        "the group went hiking near the lake and painted",
    ]
    for store in (real, memory):
        sums = [make_summary(u, f"{u}{i}", t) for u in ("a", "b") for i, t in enumerate(texts)]
        for user in ("a", "b"):
            mine = [s for s in sums if s.user_id == user]
            store.commit_segments(user, [make_segment(user, "seg", "raw group talk")], mine, [])
    for query in ("support group", "Caroline adoption", "lake painted", "group", "walks"):
        want = real.lexical_search(RowScope("a"), query, 10)
        got = memory.lexical_search(RowScope("a"), query, 10)
        assert [i for i, _ in got] == [i for i, _ in want], query
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-4), query
