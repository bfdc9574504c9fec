"""The LanceDB store's in-memory dense index on real LanceDB: kept fresh by the writer's own
commits, dropped on status changes and failed commits, bypassed for users over its budget, and
reloaded by a read-only handle when the writer moves the table on."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from hymem.core.types import Level, StatusChange, SummaryStatus
from hymem.indexes.lance import schema as S
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.commits import CommitWriter
from hymem.indexes.store.store import Store

from tests.fixtures_store import BASE_TIME, make_segment, make_summary, vec

pytestmark = pytest.mark.integration


def _seed(store: Store, user: str = "u", n: int = 6) -> None:
    sums = [make_summary(user, f"s{i}", f"fact {i}", vector=vec(1.0, 0.1 * i)) for i in range(n)]
    store.commit_segments(user, [make_segment(user, "seg")], sums, [])


def test_a_commit_reaches_the_cached_user_without_a_reload(
    make_store: Callable[..., Store],
) -> None:
    store = make_store()
    _seed(store)
    assert [i for i, _ in store.dense_search(RowScope("u"), vec(1.0), 1)] == ["s0"]
    entry = store.dense_cache.get(S.SUMMARIES, "u")
    assert entry is not None and entry.n == 6
    newest = make_summary("u", "new", "the newest fact", vector=vec(0.0, 0.0, 1.0))
    store.commit_segments("u", [make_segment("u", "seg2")], [newest], [])
    assert store.dense_cache.get(S.SUMMARIES, "u") is entry and entry.n == 7  # a delta
    got = store.dense_rows(RowScope("u"), vec(0.0, 0.0, 1.0), 1)
    assert got[0]["id"] == "new" and got[0]["text"] == "the newest fact"


def test_a_status_change_is_seen_by_the_next_search(make_store: Callable[..., Store]) -> None:
    store = make_store()
    _seed(store)
    assert store.dense_search(RowScope("u"), vec(1.0), 1)[0][0] == "s0"
    change = StatusChange(summary_id="s0", status=SummaryStatus.SUPERSEDED, superseded_by="s1")
    store.apply_summary_changes("u", [], [change])
    assert store.dense_search(RowScope("u"), vec(1.0), 1)[0][0] == "s1"
    both = store.dense_search(RowScope("u", statuses=list(SummaryStatus)), vec(1.0), 2)
    assert [i for i, _ in both] == ["s0", "s1"]


def test_a_failed_commit_drops_the_cached_user(
    make_store: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store()
    _seed(store)
    store.dense_search(RowScope("u"), vec(1.0), 1)
    assert store.dense_cache.get(S.SUMMARIES, "u") is not None

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(CommitWriter, "commit_segments", boom)
    with pytest.raises(OSError):
        store.commit_segments("u", [], [make_summary("u", "x", "lost")], [])
    assert store.dense_cache.get(S.SUMMARIES, "u") is None
    monkeypatch.undo()
    assert [i for i, _ in store.dense_search(RowScope("u"), vec(1.0), 2)] == ["s0", "s1"]


def test_a_user_over_the_budget_is_searched_in_lancedb(make_store: Callable[..., Store]) -> None:
    cached, direct = make_store("a"), make_store("b", dense_cache_bytes=1)
    for store in (cached, direct):
        _seed(store, n=12)
    q = vec(1.0, 0.35)
    a, b = direct.dense_search(RowScope("u"), q, 5), cached.dense_search(RowScope("u"), q, 5)
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
    assert direct.dense_cache.get(S.SUMMARIES, "u") is None
    assert cached.dense_cache.get(S.SUMMARIES, "u") is not None


def test_a_reader_reloads_after_the_writer_commits(make_store: Callable[..., Store]) -> None:
    writer = make_store()
    _seed(writer)
    reader = make_store(read_only=True)
    assert reader.dense_search(RowScope("u"), vec(0.0, 0.0, 1.0), 1)[0][0] != "late"
    late = make_summary("u", "late", "written after the reader cached", vector=vec(0.0, 0.0, 1.0))
    writer.commit_segments("u", [make_segment("u", "seg2")], [late], [])
    assert reader.dense_search(RowScope("u"), vec(0.0, 0.0, 1.0), 1)[0][0] == "late"


def _mixed(store: Store) -> None:
    """Rows whose times are set, open-ended or missing, at both levels."""
    day = timedelta(days=1)
    segs = [
        make_segment("u", "g1", turn_ids=["t1", "t2"], start=BASE_TIME, end=BASE_TIME + day),
        make_segment("u", "g2", turn_ids=[], start=None, end=None),
    ]
    sums = [
        make_summary("u", "a", "dated fact", segment_id="g1", end=BASE_TIME + day),
        make_summary("u", "b", "open fact", segment_id="g1", start=None, end=BASE_TIME),
        make_summary("u", "c", "undated fact", segment_id="g2", start=None),
    ]
    store.commit_segments("u", segs, sums, [])


@pytest.mark.parametrize("level", [Level.SUMMARY, Level.SEGMENT])
def test_hit_rows_from_memory_equal_lancedbs(
    make_store: Callable[..., Store], level: Level
) -> None:
    """The cache serves the winners' and the lexical ids' rows itself (no `id IN` lookup):
    they must be exactly what LanceDB returns, before and after a committed delta."""
    writer = make_store()
    _mixed(writer)
    q = vec(1.0, 0.2)
    for _ in range(2):
        direct = make_store(read_only=True, dense_cache_bytes=0)  # LanceDB answers everything
        served = writer.dense_rows(RowScope("u", level=level, statuses=None), q, 10)
        table = S.SUMMARIES if level is Level.SUMMARY else S.SEGMENTS
        assert writer.dense_cache.get(table, "u") is not None
        expected = direct.dense_rows(RowScope("u", level=level, statuses=None), q, 10)
        assert len(served) == len(expected) >= 2
        for got, want in zip(served, expected, strict=True):
            assert got.pop("_distance") == pytest.approx(want.pop("_distance"), abs=1e-5)
            assert got == want
        ids = [r["id"] for r in expected] + ["not-there"]
        assert writer.hydrate("u", level, ids) == direct.hydrate("u", level, ids)
        late = make_summary("u", "d", "a later fact", segment_id="g3", start=None, end=None)
        writer.commit_segments(
            "u", [make_segment("u", "g3", turn_ids=["t9"], start=None)], [late], []
        )
