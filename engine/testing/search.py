"""One behavioural suite for every `Storage`, search half: dense and lexical ordering, filters
by status and time (naive-UTC and aware bounds alike), and hydration.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hymem.core.errors import StoreError
from hymem.core.types import Attribution, Level, SummaryStatus
from hymem.indexes.ports import Storage
from hymem.indexes.protocol import HIT_COLUMNS, RowScope, TimeRange
from hymem.testing.records import (
    StorageKit,
    make_segment,
    make_summary,
    vec,
)

DAY = datetime(2023, 5, 8)


HOSTILE = ['"unbalanced', "it's", "user_id:* OR 1", "(a AND", "-", "`rm -rf`", "😀", "\\ / : ;"]


def _at(hour: float) -> datetime:
    return DAY + timedelta(hours=hour)


def _timeline(store: Storage) -> None:
    """Summaries and segments at known times, all about a walk by the lake."""
    when: dict[str, tuple[datetime | None, datetime | None]] = {
        "h08": (_at(8), None),
        "h10": (_at(10), _at(10)),
        "h12": (_at(12), _at(12)),
        "h14": (_at(14), None),
        "span": (_at(9), _at(11)),
        "start_only": (_at(10.5), None),
        "end_only": (None, _at(13.5)),
        "undated": (None, None),
    }
    for name, (start, end) in when.items():
        text = f"a walk by the lake {name}"
        seg = make_segment("u", f"g-{name}", text, start=start, end=end)
        summ = make_summary("u", name, text, segment_id=seg.id, start=start, end=end)
        store.commit_segments("u", [seg], [summ], [])


RANGES: list[tuple[TimeRange, set[str]]] = [
    ((_at(9), _at(13)), {"h10", "h12", "span", "start_only"}),
    ((None, _at(9)), {"h08", "span"}),
    ((_at(13), None), {"h14", "end_only"}),
    ((_at(11), _at(11)), {"span"}),
    ((None, None), {"h08", "h10", "h12", "h14", "span", "start_only", "end_only", "undated"}),
]


def _found(store: Storage, level: Level, time_range: TimeRange) -> tuple[set[str], set[str]]:
    """(dense ids, lexical ids) of every record the range lets through, as summary names."""
    query = make_summary("q", "q", "a walk by the lake").vector or []
    dense = {
        i
        for i, _ in store.dense_search(RowScope("u", level=level, time_range=time_range), query, 50)
    }
    lexical = {
        i
        for i, _ in store.lexical_search(
            RowScope("u", level=level, time_range=time_range), "walk lake", 50
        )
    }
    return {_strip(level, i) for i in dense}, {_strip(level, i) for i in lexical}


def _strip(level: Level, id_: str) -> str:
    """A hit's name: a segment's id without its "g-"."""
    return id_.removeprefix("g-") if level is Level.SEGMENT else id_


class SearchTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    def test_dense_search_ranks_by_cosine_after_filtering(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        heads = {"exact": (1.0,), "near": (1.0, 0.5), "diag": (1.0, 1.0), "ortho": (0.0, 1.0)}
        sums = [make_summary("u", i, f"text {i}", vector=vec(*h)) for i, h in heads.items()]
        theirs = [make_summary("v", f"v{i}", "same vector", vector=vec(1.0)) for i in range(5)]
        store.commit_segments("u", [make_segment("u", "seg")], sums, [])
        store.commit_segments("v", [make_segment("v", "seg")], theirs, [])
        got = store.dense_search(RowScope("u"), vec(1.0), 3)
        assert [i for i, _ in got] == ["exact", "near", "diag"]
        assert [s for _, s in got] == pytest.approx([1.0, 0.8944272, 0.7071068], abs=1e-5)
        rows = store.dense_rows(RowScope("u"), vec(1.0), 2)
        assert [set(r) for r in rows] == [{*HIT_COLUMNS[Level.SUMMARY], "_distance"}] * 2
        assert (
            rows[0]["_distance"] == pytest.approx(0.0, abs=1e-6) and rows[0]["status"] == "active"
        )
        assert rows[0]["segment_id"] == "seg" and rows[0]["user_id"] == "u"
        assert store.dense_search(RowScope("u", statuses=[]), vec(1.0), 10) == []
        with pytest.raises(StoreError):
            store.dense_search(RowScope("u"), [1.0, 0.0], 3)

    def test_dense_search_over_segments(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        segs = [
            make_segment("u", "a", "first", turn_ids=["t0", "t1"], vector=vec(0.0, 1.0)),
            make_segment("u", "b", "second", turn_ids=["t2"], vector=vec(1.0, 0.2)),
        ]
        store.commit_segments("u", segs, [], [])
        rows = store.dense_rows(
            RowScope("u", level=Level.SEGMENT, statuses=[]), vec(1.0), 5
        )  # no status
        assert [r["id"] for r in rows] == ["b", "a"]
        assert set(rows[0]) == {*HIT_COLUMNS[Level.SEGMENT], "_distance"}
        assert rows[0]["turn_ids"] == ["t2"] and rows[1]["turn_ids"] == ["t0", "t1"]

    def test_lexical_search_ranks_by_bm25_over_analyzed_terms(
        self, storage_kit: StorageKit
    ) -> None:
        store = storage_kit.store
        texts = {
            "a": "apple apple banana",
            "b": "apple cherry",
            "c": "banana cherry durian",
            "d": "unrelated words entirely",
        }
        sums = [make_summary("u", i, t) for i, t in texts.items()]
        seg = make_segment("u", "seg", "the mango stall at the market")
        store.commit_segments("u", [seg], sums, [])
        apple = store.lexical_search(RowScope("u"), "apple", 10)
        assert [i for i, _ in apple] == ["a", "b"]  # term frequency
        assert [i for i, _ in store.lexical_search(RowScope("u"), "durian apple", 10)] == [
            "c",
            "a",
            "b",
        ]  # idf
        assert [i for i, _ in store.lexical_search(RowScope("u"), "Apples!", 10)] == [
            "a",
            "b",
        ]  # stemmed
        assert all(s > 0 for _, s in apple) and apple[0][1] > apple[1][1]
        assert store.lexical_search(RowScope("u"), "apple", 1) == apple[:1]
        assert [
            i for i, _ in store.lexical_search(RowScope("u", level=Level.SEGMENT), "mangoes", 5)
        ] == ["seg"]
        for noise in ("the and of", "😀🎉", "AND OR", "-"):
            assert store.lexical_search(RowScope("u"), noise, 5) == []
        for query in HOSTILE:
            assert {i for i, _ in store.lexical_search(RowScope("u"), query, 5)} <= set(texts)
        assert store.lexical_search(RowScope("u", statuses=[]), "apple", 5) == []
        assert store.lexical_search(RowScope("u"), "apple " * 2000, 5)[0][0] == "a"  # a 12 kB query

    @pytest.mark.parametrize("level", [Level.SUMMARY, Level.SEGMENT])
    def test_time_ranges_select_overlapping_records(
        self, storage_kit: StorageKit, level: Level
    ) -> None:
        _timeline(storage_kit.store)
        for time_range, expected in RANGES:
            dense, lexical = _found(storage_kit.store, level, time_range)
            assert dense == lexical == expected, time_range

    @pytest.mark.parametrize("hours", [-7, 0, 2, 5.5, 9])
    def test_aware_bounds_select_what_the_naive_utc_bounds_select(
        self, storage_kit: StorageKit, hours: float
    ) -> None:
        _timeline(storage_kit.store)
        zone = timezone(timedelta(hours=hours))

        def aware(b: datetime | None) -> datetime | None:
            return None if b is None else b.replace(tzinfo=UTC).astimezone(zone)

        for level in (Level.SUMMARY, Level.SEGMENT):
            for (since, until), expected in RANGES:
                dense, lexical = _found(storage_kit.store, level, (aware(since), aware(until)))
                assert dense == lexical == expected, (level, since, until)

    def test_aware_record_times_are_stored_as_naive_utc(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        paris_noon = datetime(2023, 5, 8, 12, tzinfo=timezone(timedelta(hours=2)))
        seg = make_segment("u", "g", "picnic in the park", start=paris_noon, end=paris_noon)
        summ = make_summary("u", "s", "picnic in the park", segment_id="g", start=paris_noon)
        store.commit_segments("u", [seg], [summ], [])
        assert store.get_summaries("u")[0].time_start == datetime(2023, 5, 8, 10)
        assert store.get_segments("u", ["g"])[0].time_end == datetime(2023, 5, 8, 10)
        window = (datetime(2023, 5, 8, 9, 30), datetime(2023, 5, 8, 10, 30))
        assert [
            i for i, _ in store.lexical_search(RowScope("u", time_range=window), "picnic", 5)
        ] == ["s"]
        late = (datetime(2023, 5, 8, 11), None)
        assert store.lexical_search(RowScope("u", time_range=late), "picnic", 5) == []

    def test_hydrate_returns_hit_rows_of_known_ids(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        seg = make_segment("u", "g", "raw", turn_ids=["t1"])
        store.commit_segments("u", [seg], [make_summary("u", "s", "fact", segment_id="g")], [])
        rows = store.hydrate("u", Level.SUMMARY, ["s", "missing", "g"])
        assert list(rows) == ["s"] and set(rows["s"]) == set(HIT_COLUMNS[Level.SUMMARY])
        assert (rows["s"]["segment_id"], rows["s"]["status"]) == ("g", SummaryStatus.ACTIVE.value)
        segs = store.hydrate("u", Level.SEGMENT, ["g"])
        assert set(segs["g"]) == set(HIT_COLUMNS[Level.SEGMENT]) and segs["g"]["turn_ids"] == ["t1"]
        assert (
            store.hydrate("u", Level.SUMMARY, []) == {}
            and store.hydrate("v", Level.SEGMENT, ["g"]) == {}
        )

    def test_summary_provenance_round_trips_through_reads_and_every_search(
        self,
        storage_kit: StorageKit,
    ) -> None:
        """source_turn_ids and attribution come back from get_summaries, dense rows (cached or
        LanceDB), lexical hydration and a reader's handle, as the writer stored them."""
        store = storage_kit.store
        seg = make_segment("u", "g", "raw", turn_ids=["t1", "t2", "t3"])
        sums = [
            make_summary(
                "u",
                "s1",
                "Alice adopted a cat",
                segment_id="g",
                vector=vec(1.0),
                source_turn_ids=["t2"],
                attribution=Attribution.SOURCE,
            ),
            make_summary(
                "u",
                "s2",
                "Alice lives in Paris",
                segment_id="g",
                vector=vec(0.0, 1.0),
                source_turn_ids=["t1", "t2", "t3"],
                attribution=Attribution.SEGMENT,
            ),
        ]
        store.commit_segments("u", [seg], sums, [])
        want = {"s1": (["t2"], "source"), "s2": (["t1", "t2", "t3"], "segment")}
        for handle in (store, storage_kit.open_reader()):
            got = {
                s.id: (s.source_turn_ids, s.attribution.value) for s in handle.get_summaries("u")
            }
            assert got == want
            dense = handle.dense_rows(RowScope("u"), vec(1.0), 2)
            assert [(r["id"], r["source_turn_ids"], r["attribution"]) for r in dense] == [
                ("s1", ["t2"], "source"),
                ("s2", ["t1", "t2", "t3"], "segment"),
            ]
            hydrated = handle.hydrate("u", Level.SUMMARY, ["s2"])["s2"]
            assert (hydrated["source_turn_ids"], hydrated["attribution"]) == want["s2"]

    def test_a_summary_is_found_by_its_context_but_never_shows_it(
        self, storage_kit: StorageKit
    ) -> None:
        """The context key (`hymem.indexes.keys`) is searched with the text, in every store and
        after a lexical rebuild, and stays out of what a hit shows."""
        store = storage_kit.store
        seg = make_segment("u", "g", "raw", turn_ids=["t1", "t2"])
        sums = [
            make_summary(
                "u",
                "a",
                "Caro is researching adoption agencies",
                segment_id="g",
                vector=vec(1.0),
                context="Mel: What are your plans for the summer?",
            ),
            make_summary(
                "u", "b", "Mel likes the summer sun", segment_id="g", vector=vec(0.0, 1.0)
            ),
        ]
        store.commit_segments("u", [seg], sums, [])
        for handle in (store, storage_kit.open_reader()):
            assert [i for i, _ in handle.lexical_search(RowScope("u"), "plans", 5)] == ["a"]
            assert handle.get_summaries("u", ids=["a"])[0].context == sums[0].context
            assert handle.hydrate("u", Level.SUMMARY, ["a"])["a"]["text"] == sums[0].text
        store.reindex()
        assert [i for i, _ in store.lexical_search(RowScope("u"), "plans", 5)] == ["a"]


__all__ = ["SearchTests"]
