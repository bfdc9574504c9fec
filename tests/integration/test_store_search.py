"""Hybrid search over real LanceDB + Tantivy: isolation, hostile text, filters, versions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hymem.core.types import Level, StatusChange, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store
from hymem.search.fusion import DEFAULT_RRF_K
from hymem.search.hybrid import HybridSearcher
from hymem.search.scope import search_scope

from tests.fixtures_store import commit_texts, make_records, make_turns, open_store

pytestmark = pytest.mark.integration

EVIL = "x' OR '1'='1"
HOSTILE = [
    '"unbalanced quote',
    "it's Caroline's",
    "title:support OR user_id:*",
    "(support AND group",
    "support)) ]][[ {}",
    "AND",
    "OR OR NOT",
    "-",
    "- support -",
    "`rm -rf`",
    "😀🎉",
    "support 😀 group",
    "\\ / : ; * ? ~ ^ + ! & |",
    "\n\t\r",
    "ⅷ ß ǅ 数学 مرحبا",
    "support group " * 700,  # ~10 kB
]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridSearcher]:
    """One read-only-use store for the module's search tests (tests here must not write)."""
    hashing_embedder = HashingEmbedder(64)
    tmp_store = open_store(tmp_path_factory.mktemp("search") / "m", hashing_embedder)
    commit_texts(
        tmp_store,
        hashing_embedder,
        "alice",
        [
            "Caroline went to the LGBTQ support group on 7 May 2023",
            "Melanie painted a sunrise over the lake",
            "Caroline is researching adoption agencies",
        ],
        segment_id="a-seg",
    )
    commit_texts(
        tmp_store,
        hashing_embedder,
        "bob",
        [
            "Bob joined a support group for runners",
        ],
        segment_id="b-seg",
    )
    commit_texts(
        tmp_store,
        hashing_embedder,
        EVIL,
        ["The evil user likes support groups"],
        segment_id="e-seg",
    )
    searcher = HybridSearcher(tmp_store, hashing_embedder)
    yield searcher
    searcher.close()
    tmp_store.close()


def test_hits_carry_scores_ranks_and_links(searcher: HybridSearcher) -> None:
    hits = searcher.search("support group", user_id="alice", k=3)
    top = hits[0]
    assert top.id == "a-seg-s0" and top.level is Level.SUMMARY
    assert top.segment_id == "a-seg" and top.status is SummaryStatus.ACTIVE
    assert top.dense_rank == 1 and top.lexical_rank == 1
    assert top.dense_score is not None and 0 < top.dense_score <= 1
    assert top.lexical_score is not None and top.lexical_score > 0
    assert top.fused_score == pytest.approx(2 / (DEFAULT_RRF_K + 1))
    assert top.time_start == datetime(2023, 5, 8, 13, 56)
    assert [h.fused_score for h in hits] == sorted((h.fused_score for h in hits), reverse=True)


def test_the_id_ranking_is_the_ranking_find_serves(searcher: HybridSearcher) -> None:
    """Issue #29: the light path ranks by ids (`rank`) and reads rows for the few it keeps;
    the hits it builds are the hits `find` returns, rank for rank and score for score."""
    for query, level in (("support group", Level.SUMMARY), ("lake sunrise", Level.SEGMENT)):
        scope = search_scope(query, user_id="alice", k=3, level=level)
        vector = searcher.embedder.embed([query])[0]
        found = searcher.find(query, scope, vector)
        ranked = searcher.rank(query, scope, vector, also=[vector], also_k=2)
        rows = searcher.rows(scope, [i for i, _ in ranked.fused])
        built = [ranked.hit(rows[i], score) for i, score in ranked.fused[: scope.k]]
        assert built == found
        assert [i for i, _ in ranked.also[0]] == [i for i, _ in ranked.fused if i in ranked.dense][
            :2
        ]
        assert searcher.rows(replace(scope, user_id="bob"), [h.id for h in found]) == {}


def test_stemming_matches_inflections(searcher: HybridSearcher) -> None:
    hits = searcher.search("researched agency", user_id="alice", k=1, mode="lexical")
    assert [h.id for h in hits] == ["a-seg-s2"]


def test_users_are_isolated_including_injection_attempts(searcher: HybridSearcher) -> None:
    for user, expected in (("alice", "a-seg"), ("bob", "b-seg"), (EVIL, "e-seg")):
        for mode in ("hybrid", "dense", "lexical"):
            hits = searcher.search("support group", user_id=user, k=10, mode=mode)
            assert hits and {h.segment_id for h in hits} == {expected}, (user, mode)
            assert {h.user_id for h in hits} == {user}
    # a literal filter escape in the user id finds no one else's data
    for probe in ("x", "x'", "' OR 1=1 --", "alice' OR '1'='1"):
        assert searcher.search("support", user_id=probe, k=10) == []
    store = searcher.store
    assert store.counts(EVIL)["summaries"] == 1
    assert [s.id for s in store.get_summaries(EVIL)] == ["e-seg-s0"]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(searcher: HybridSearcher, query: str) -> None:
    for mode in ("hybrid", "lexical"):
        if not query.strip():
            continue
        hits = searcher.search(query, user_id="alice", k=5, mode=mode)
        assert {h.user_id for h in hits} <= {"alice"}


def test_noise_only_queries_have_no_lexical_hits(searcher: HybridSearcher) -> None:
    for query in ("😀🎉", "the and of", "AND OR", "-"):
        assert searcher.store.lexical_search(RowScope("alice"), query, 10) == []
        hits = searcher.search(query, user_id="alice", k=3)
        assert all(h.lexical_rank is None for h in hits)


def test_empty_store_and_unknown_user(tmp_store: Store, hashing_embedder: HashingEmbedder) -> None:
    searcher = HybridSearcher(tmp_store, hashing_embedder)
    for level in ("summary", "segment"):
        assert searcher.search("anything", user_id="nobody", k=5, level=level) == []


def test_segment_level_supports_dense_and_lexical(searcher: HybridSearcher) -> None:
    hits = searcher.search("sunrise over the lake", user_id="alice", k=2, level="segment")
    assert [h.id for h in hits] == ["a-seg"]
    seg = hits[0]
    assert seg.level is Level.SEGMENT and seg.dense_rank == 1 and seg.lexical_rank == 1
    assert "Melanie painted" in seg.text and seg.status is None


def test_time_range_filter(tmp_store: Store, hashing_embedder: HashingEmbedder) -> None:
    for month in (1, 3, 5):
        commit_texts(
            tmp_store,
            hashing_embedder,
            "u",
            [f"trip to the lake in month {month}"],
            segment_id=f"m{month}",
            time=datetime(2023, month, 10),
        )
    s = HybridSearcher(tmp_store, hashing_embedder)
    start, end = datetime(2023, 2, 1), datetime(2023, 4, 1)
    for mode in ("hybrid", "dense", "lexical"):
        for level in ("summary", "segment"):
            hits = s.search(
                "trip lake", user_id="u", k=10, mode=mode, level=level, since=start, until=end
            )
            assert {h.segment_id for h in hits} == {"m3"}, (mode, level)
    since = s.search("trip lake", user_id="u", k=10, since=datetime(2023, 3, 10))
    assert {h.segment_id for h in since} == {"m3", "m5"}
    until = s.search("trip lake", user_id="u", k=10, until=datetime(2023, 3, 9))
    assert {h.segment_id for h in until} == {"m1"}


def test_aware_time_bounds_select_the_same_rows_in_every_mode(
    tmp_store: Store, hashing_embedder: HashingEmbedder
) -> None:
    """Stored times are naive UTC; an aware bound is the same instant in any offset."""
    for hour in (8, 10, 12, 14):
        commit_texts(
            tmp_store,
            hashing_embedder,
            "u",
            [f"walk by the lake at hour {hour}"],
            segment_id=f"h{hour}",
            time=datetime(2023, 5, 8, hour),
        )
    s = HybridSearcher(tmp_store, hashing_embedder)
    naive = (datetime(2023, 5, 8, 9), datetime(2023, 5, 8, 13))
    for offset in (-7, 0, 2, 9, 5.5):
        tz = timezone(timedelta(hours=offset))
        aware = tuple(b.replace(tzinfo=UTC).astimezone(tz) for b in naive)
        for mode in ("hybrid", "dense", "lexical"):
            for level in ("summary", "segment"):
                got = [
                    {
                        h.segment_id
                        for h in s.search(
                            "walk lake",
                            user_id="u",
                            k=10,
                            mode=mode,
                            level=level,
                            since=rng[0],
                            until=rng[1],
                        )
                    }
                    for rng in (naive, aware, (aware[0], None), (None, aware[1]))
                ]
                assert got[0] == got[1] == {"h10", "h12"}, (offset, mode, level)
                assert got[2] == {"h10", "h12", "h14"} and got[3] == {"h8", "h10", "h12"}


def test_status_filter_and_versions(tmp_store: Store, hashing_embedder: HashingEmbedder) -> None:
    _, (old,) = commit_texts(
        tmp_store, hashing_embedder, "u", ["Alice lives in Paris"], segment_id="g1"
    )
    _, (new,) = make_records(
        hashing_embedder, "u", ["Alice lives in Berlin now"], segment_id="g1", id_prefix="v2-"
    )
    new = new.model_copy(update={"version": 2, "previous_id": old.id, "origin": "consolidated"})
    tmp_store.apply_summary_changes(
        "u",
        [new],
        [
            StatusChange(
                summary_id=old.id,
                status=SummaryStatus.SUPERSEDED,
                superseded_by=new.id,
                reason="moved",
            )
        ],
    )
    s = HybridSearcher(tmp_store, hashing_embedder)
    for mode in ("hybrid", "dense", "lexical"):
        ids = [h.id for h in s.search("Alice lives Paris", user_id="u", k=5, mode=mode)]
        assert old.id not in ids and new.id in ids, mode
        ids = [
            h.id
            for h in s.search(
                "Alice lives Paris", user_id="u", k=5, mode=mode, include_inactive=True
            )
        ]
        assert old.id in ids, mode
    retired = tmp_store.get_summaries("u", ids=[old.id], statuses=None)[0]
    assert retired.status is SummaryStatus.SUPERSEDED and retired.superseded_by == new.id
    assert retired.reason == "moved"
    assert [r.id for r in tmp_store.get_summaries("u")] == [new.id]
    assert tmp_store.counts("u")["active_summaries"] == 1
    # applying the same change again changes nothing
    tmp_store.apply_summary_changes(
        "u",
        [new],
        [
            StatusChange(
                summary_id=old.id,
                status=SummaryStatus.SUPERSEDED,
                superseded_by=new.id,
                reason="moved",
            )
        ],
    )
    assert tmp_store.counts("u")["summaries"] == 2


def test_recommit_replaces_segment_and_linked_summaries(
    tmp_store: Store, hashing_embedder: HashingEmbedder
) -> None:
    tmp_store.append_turns(make_turns("u", 3))
    commit_texts(
        tmp_store,
        hashing_embedder,
        "u",
        ["first draft one", "first draft two"],
        segment_id="g",
        turn_ids=["t0", "t1", "t2"],
    )
    commit_texts(
        tmp_store,
        hashing_embedder,
        "u",
        ["second draft"],
        segment_id="g",
        turn_ids=["t0", "t1", "t2"],
        id_prefix="r-",
    )
    assert tmp_store.counts("u") == {
        "turns": 3,
        "pending_turns": 0,
        "segments": 1,
        "summaries": 1,
        "active_summaries": 1,
        "traces": 0,
    }
    assert tmp_store.lexical_search(RowScope("u"), "first", 10) == []
    assert [i for i, _ in tmp_store.lexical_search(RowScope("u"), "second draft", 10)] == ["r-0"]
    assert {t.segment_id for t in tmp_store.get_turns("u")} == {"g"}


def test_get_records_and_iterate(tmp_store: Store, hashing_embedder: HashingEmbedder) -> None:
    seg, sums = commit_texts(tmp_store, hashing_embedder, "u", [f"fact {i}" for i in range(5)])
    got = tmp_store.get_segments("u", ["nope", seg.id])
    assert [g.id for g in got] == [seg.id] and got[0].turn_ids == seg.turn_ids
    assert tmp_store.get_segments("other", [seg.id]) == []
    with_vec = tmp_store.get_summaries("u", ids=[sums[3].id], with_vectors=True)[0]
    assert with_vec.vector == pytest.approx(sums[3].vector)
    batches = list(tmp_store.iter_summaries("u", batch_size=2))
    assert sum(len(b) for b in batches) == 5
    assert list(tmp_store.iter_summaries("nobody")) == []


def test_traces_round_trip(tmp_store: Store) -> None:
    tmp_store.write_trace(
        {
            "trace_id": "b",
            "user_id": "u",
            "created_at": datetime(2024, 1, 2),
            "question": "q?",
            "escalated": True,
            "iterations": 2,
            "stages": {"light": 1.5},
        }
    )
    tmp_store.write_trace(
        {"trace_id": "a", "user_id": "u", "created_at": datetime(2024, 1, 1), "escalated": False}
    )
    tmp_store.write_trace({"trace_id": "c", "user_id": EVIL, "created_at": datetime(2024, 1, 3)})
    traces = tmp_store.read_traces(user_id="u")
    assert [t["trace_id"] for t in traces] == ["a", "b"]
    assert traces[1]["stages"] == {"light": 1.5} and traces[1]["escalated"] is True
    assert isinstance(traces[1]["created_at"], datetime)
    assert [t["trace_id"] for t in tmp_store.read_traces(since=datetime(2024, 1, 2))] == ["b", "c"]
    assert [t["trace_id"] for t in tmp_store.read_traces(user_id=EVIL)] == ["c"]


def test_ann_index_built_past_threshold_keeps_results(tmp_path: Path) -> None:
    emb = HashingEmbedder(64)
    store = open_store(tmp_path / "m", emb, vector_index_min_rows=256)
    try:
        texts = [f"note {i} about topic{i % 37} and item{i}" for i in range(600)]
        for start in range(0, 600, 200):
            commit_texts(store, emb, "u", texts[start : start + 200], segment_id=f"g{start}")
        store.optimize()
        assert store.tables.has_vector_index("summaries")
        hits = HybridSearcher(store, emb).search("note 123 about topic12 item123", user_id="u", k=5)
        assert hits[0].text == texts[123] and hits[0].dense_rank == 1
        assert HybridSearcher(store, emb).search("item5", user_id="other", k=5) == []
    finally:
        store.close()
