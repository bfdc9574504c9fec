"""One behavioural suite for every `Storage`: lifecycle, turns, commits, reads, history, traces.

Each test runs once per store the `storage_kit` fixture yields (hymem runs every kind it has),
so a promise of the ports is tested once, and a component tested against the in-memory store
may rely on the real one behaving the same. Search lives in `search.py`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hymem.core.errors import ReadOnlyStoreError, StoreClosedError, UserInputError
from hymem.core.time import utcnow
from hymem.core.types import Level, StatusChange, SummaryStatus, TurnStatus
from hymem.indexes.ports import Storage
from hymem.indexes.protocol import RowScope
from hymem.testing.records import (
    BASE_TIME,
    DIM,
    EVIL,
    StorageKit,
    make_segment,
    make_summary,
    make_turns,
    vec,
)

ACTIVE, SUPERSEDED, DELETED = SummaryStatus.ACTIVE, SummaryStatus.SUPERSEDED, SummaryStatus.DELETED


def _commit(
    store: Storage, user: str, seg_id: str, texts: list[str], text: str | None = None
) -> list[str]:
    """Commit one segment (raw `text`) with one summary per text; returns the summary ids."""
    sums = [make_summary(user, f"{seg_id}-s{i}", t, segment_id=seg_id) for i, t in enumerate(texts)]
    store.commit_segments(user, [make_segment(user, seg_id, text)], sums, [])
    return [s.id for s in sums]


class StorageTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    def test_implements_the_protocol(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        assert isinstance(store, Storage)
        assert isinstance(store.path, Path | str) and store.read_only is False
        assert store.lexical_unavailable is False  # a healthy store serves lexical search
        assert storage_kit.open_reader().lexical_unavailable is False
        meta = store.meta()
        assert (meta["embedder"], meta["dim"]) == ("hashing-64", DIM)
        assert store.users() == [] and store.next_seq("nobody") == 0
        assert store.counts() == dict.fromkeys(
            ["turns", "pending_turns", "segments", "summaries", "active_summaries", "traces"], 0
        )

    def test_append_turns_is_idempotent_per_user_and_id(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        turns = make_turns("alice", 3)
        assert store.append_turns(turns) == ["t0", "t1", "t2"]
        assert store.append_turns(turns + make_turns("alice", 4)) == ["t3"]
        assert store.append_turns(make_turns("bob", 2)) == ["t0", "t1"]  # another user's t0
        twice = [
            *make_turns("carol", 1),
            make_turns("carol", 1)[0].model_copy(update={"text": "b"}),
        ]
        assert store.append_turns(twice) == ["t0"] and store.get_turns("carol")[0].text == "turn 0"
        assert store.append_turns([]) == []
        assert [t.id for t in store.get_turns("alice")] == ["t0", "t1", "t2", "t3"]
        assert [t.id for t in store.get_turns("alice", ids=["t2", "t0"])] == ["t0", "t2"]
        assert store.next_seq("alice") == 4 and store.next_seq("dave") == 0
        assert store.users() == ["alice", "bob", "carol"]
        pending = store.get_turns("alice", status=TurnStatus.PENDING)
        assert len(pending) == 4 and all(t.segment_id is None for t in pending)

    def test_fresh_ids_are_inserted_and_other_ids_still_checked(
        self, storage_kit: StorageKit
    ) -> None:
        store = storage_kit.store
        turns = make_turns("alice", 4)
        assert store.append_turns(turns[:2]) == ["t0", "t1"]
        # t2, t3 are declared fresh; t1 is not and is already stored: skipped as always
        assert store.append_turns(turns[1:], fresh_ids={"t2", "t3"}) == ["t2", "t3"]
        assert [t.id for t in store.get_turns("alice")] == ["t0", "t1", "t2", "t3"]

    def test_turns_are_ordered_by_seq_then_id(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        turns = make_turns("u", 4)
        shuffled = [turns[2], turns[0], turns[3].model_copy(update={"seq": 1, "id": "a"}), turns[1]]
        store.append_turns(shuffled)
        assert [(t.seq, t.id) for t in store.get_turns("u")] == [
            (0, "t0"),
            (1, "a"),
            (1, "t1"),
            (2, "t2"),
        ]

    def test_commit_makes_records_visible_and_marks_turns_stored(
        self, storage_kit: StorageKit
    ) -> None:
        store = storage_kit.store
        store.append_turns(make_turns("u", 4))
        segs = [
            make_segment("u", "g1", "Alice moved to Paris", turn_ids=["t0", "t1"]),
            make_segment("u", "g2", "Alice adopted a cat", turn_ids=["t1", "t2"]),
        ]
        sums = [
            make_summary("u", "s1", "Alice lives in Paris", segment_id="g1"),
            make_summary("u", "s2", "Alice has a cat", segment_id="g2"),
        ]
        store.commit_segments("u", segs, sums, ["t0", "t1", "t2", "t-unknown"])
        links = {t.id: (t.status, t.segment_id) for t in store.get_turns("u")}
        assert links == {
            "t0": (TurnStatus.STORED, "g1"),
            "t1": (TurnStatus.STORED, "g1"),  # the first given segment that covers it
            "t2": (TurnStatus.STORED, "g2"),
            "t3": (TurnStatus.PENDING, None),
        }
        assert store.counts("u") == {
            "turns": 4,
            "pending_turns": 1,
            "segments": 2,
            "summaries": 2,
            "active_summaries": 2,
            "traces": 0,
        }
        summary = store.get_summaries("u", ids=["s2"])[0]
        (segment,) = store.get_segments("u", [summary.segment_id])
        assert segment.id == "g2" and segment.turn_ids == ["t1", "t2"] and segment.vector is None
        assert [i for i, _ in store.lexical_search(RowScope("u"), "cat", 5)] == ["s2"]
        assert store.dense_search(RowScope("u"), sums[0].vector or [], 1)[0][0] == "s1"

    def test_recommit_replaces_instead_of_duplicating(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _commit(store, "u", "g", ["first draft one", "first draft two"])
        _commit(store, "u", "g", ["second draft"], text="raw again")
        assert [s.id for s in store.get_summaries("u")] == ["g-s0"]
        assert store.get_summaries("u")[0].text == "second draft"
        assert store.get_segments("u", ["g"])[0].text == "raw again"
        assert store.lexical_search(RowScope("u"), "first", 10) == []
        # a summary id committed again under another segment is moved, not copied
        again = make_summary("u", "g-s0", "second draft moved", segment_id="h")
        store.commit_segments("u", [make_segment("u", "h")], [again], [])
        assert [(s.id, s.segment_id) for s in store.get_summaries("u")] == [("g-s0", "h")]
        counts = store.counts("u")
        assert (counts["segments"], counts["summaries"]) == (2, 1)
        assert len(store.dense_search(RowScope("u"), vec(1.0), 10)) == 1

    def test_the_write_paths_commits_replace_what_they_must(self, storage_kit: StorageKit) -> None:
        """A first commit of pending turns (the write path's, which may skip looking for earlier
        copies of its segments) still moves a summary id from another segment, and a segment
        committed again over its stored turns still replaces its summaries."""
        store = storage_kit.store
        store.append_turns(make_turns("u", 4))
        first = make_summary("u", "x", "Alice lives in Paris", segment_id="g")
        store.commit_segments(
            "u", [make_segment("u", "g", turn_ids=["t0", "t1"])], [first], ["t0", "t1"]
        )
        moved = make_summary("u", "x", "Alice lives in Lyon", segment_id="h")
        store.commit_segments(
            "u", [make_segment("u", "h", turn_ids=["t2", "t3"])], [moved], ["t2", "t3"]
        )
        assert [(s.id, s.segment_id, s.text) for s in store.get_summaries("u")] == [
            ("x", "h", "Alice lives in Lyon")
        ]
        redo = make_summary("u", "y", "Alice lives in Lyon now", segment_id="h")
        store.commit_segments(
            "u", [make_segment("u", "h", turn_ids=["t2", "t3"])], [redo], ["t2", "t3"]
        )
        assert sorted(s.id for s in store.get_summaries("u")) == ["y"]
        assert sorted(g.id for g in store.get_segments("u", ["g", "h"])) == ["g", "h"]
        assert {t.id: t.segment_id for t in store.get_turns("u")} == {
            "t0": "g",
            "t1": "g",
            "t2": "h",
            "t3": "h",
        }
        assert store.counts("u")["summaries"] == 1

    @pytest.mark.parametrize("fault", ["other_user", "wrong_dim", "nan", "no_vector"])
    def test_an_invalid_commit_writes_nothing(self, storage_kit: StorageKit, fault: str) -> None:
        store = storage_kit.store
        store.append_turns(make_turns("u", 2))
        good = make_summary("u", "ok", "fine")
        bad = {
            "other_user": make_summary("v", "b", "theirs"),
            "wrong_dim": make_summary("u", "b", "short", vector=[1.0, 0.0]),
            "nan": make_summary("u", "b", "nan", vector=vec(float("nan"))),
            "no_vector": make_summary("u", "b", "none").model_copy(update={"vector": None}),
        }[fault]
        with pytest.raises(UserInputError):
            store.commit_segments("u", [make_segment("u", "g")], [good, bad], ["t0", "t1"])
        with pytest.raises(UserInputError):
            store.apply_summary_changes("u", [bad], [])
        counts = store.counts("u")
        assert (counts["segments"], counts["summaries"], counts["pending_turns"]) == (0, 0, 2)

    def test_reads_follow_the_promised_order(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        sums = [
            make_summary("u", "b", "two", created=BASE_TIME),
            make_summary("u", "a", "one", created=BASE_TIME),
            make_summary("u", "c", "zero", created=BASE_TIME - timedelta(days=1)),
        ]
        segs = [make_segment("u", "g1"), make_segment("u", "g2")]
        store.commit_segments("u", segs, sums, [])
        assert [s.id for s in store.get_summaries("u")] == ["c", "a", "b"]  # (created_at, id)
        assert [s.id for s in store.get_summaries("u", ids=["b", "x", "c", "b"])] == ["b", "c"]
        assert [s.id for s in store.get_segments("u", ["g2", "nope", "g1", "g2"])] == ["g2", "g1"]
        assert store.get_segments("u", []) == [] and store.get_summaries("u", ids=[]) == []
        assert store.get_segments("other", ["g1"]) == []
        assert all(s.vector is None for s in store.get_summaries("u"))
        (with_vec,) = store.get_summaries("u", ids=["a"], with_vectors=True)
        assert with_vec.vector == pytest.approx(sums[1].vector)

    def test_iter_summaries_yields_bounded_batches(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _commit(store, "u", "g", [f"fact {i}" for i in range(5)])
        _commit(store, "v", "h", ["other one", "other two"])
        store.apply_summary_changes("u", [], [StatusChange(summary_id="g-s4", status=DELETED)])
        batches = list(store.iter_summaries("u", batch_size=2))
        assert all(0 < len(b) <= 2 for b in batches)
        assert sorted(s.id for b in batches for s in b) == ["g-s0", "g-s1", "g-s2", "g-s3"]
        assert all(s.vector is not None for b in batches for s in b)
        assert sum(len(b) for b in store.iter_summaries(statuses=None)) == 7
        no_vec = [s for b in store.iter_summaries("v", with_vectors=False) for s in b]
        assert len(no_vec) == 2 and all(s.vector is None for s in no_vec)
        assert list(store.iter_summaries("nobody")) == []

    def test_hostile_user_ids_match_only_themselves(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        for user in ("alice", EVIL, "x"):
            store.append_turns(make_turns(user, 1))
            _commit(store, user, f"{user}-g", ["the support group meets weekly"])
            store.write_trace({"trace_id": f"tr-{user}", "user_id": user})
        assert store.users() == sorted(["alice", EVIL, "x"])
        query = make_summary("q", "q", "the support group meets weekly").vector or []
        for user in ("alice", EVIL, "x"):
            assert [t.user_id for t in store.get_turns(user)] == [user]
            assert [s.user_id for s in store.get_summaries(user, statuses=None)] == [user]
            assert [i for i, _ in store.lexical_search(RowScope(user), "support group", 10)] == [
                f"{user}-g-s0"
            ]
            assert [i for i, _ in store.dense_search(RowScope(user), query, 10)] == [f"{user}-g-s0"]
            assert store.counts(user) == {
                "turns": 1,
                "pending_turns": 1,
                "segments": 1,
                "summaries": 1,
                "active_summaries": 1,
                "traces": 1,
            }
            assert [t["trace_id"] for t in store.read_traces(user_id=user)] == [f"tr-{user}"]
        for probe in ("x'", "' OR 1=1 --", "alice' OR '1'='1", "%", "*", "ALICE"):
            assert store.get_turns(probe) == [] and store.get_summaries(probe) == []
            assert store.lexical_search(RowScope(probe), "support", 10) == []
            assert store.dense_search(RowScope(probe), query, 10) == []
            assert store.hydrate(probe, Level.SUMMARY, ["alice-g-s0"]) == {}
            assert store.counts(probe)["summaries"] == 0

    def test_history_through_apply_summary_changes(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _commit(store, "u", "g", ["Alice lives in Paris", "Alice owns a bike"])
        new = make_summary("u", "v2", "Alice lives in Berlin", segment_id="g", version=2)
        new = new.model_copy(update={"previous_id": "g-s0", "origin": "consolidated"})
        changes = [
            StatusChange(summary_id="g-s0", status=SUPERSEDED, superseded_by="v2", reason="moved"),
            StatusChange(summary_id="g-s1", status=DELETED, reason="sold", evidence_id="v2"),
            StatusChange(summary_id="never-was", status=DELETED),  # unknown ids are skipped
        ]
        before = utcnow() - timedelta(seconds=1)
        store.apply_summary_changes("u", [new], changes)
        assert [s.id for s in store.get_summaries("u")] == ["v2"]
        old, sold = store.get_summaries("u", ids=["g-s0", "g-s1"], statuses=None)
        assert (old.status, old.superseded_by, old.reason) == (SUPERSEDED, "v2", "moved")
        assert (sold.status, sold.reason, sold.evidence_id) == (DELETED, "sold", "v2")
        assert (
            old.updated_at >= before and old.created_at == BASE_TIME and old.text.endswith("Paris")
        )
        (v2,) = store.get_summaries("u", ids=["v2"])
        assert (v2.previous_id, v2.version, v2.origin) == ("g-s0", 2, "consolidated")
        assert [s.id for s in store.get_summaries("u", statuses=[SUPERSEDED])] == ["g-s0"]
        assert store.lexical_search(RowScope("u"), "Paris", 5) == []
        assert [i for i, _ in store.lexical_search(RowScope("u", statuses=None), "Paris", 5)] == [
            "g-s0"
        ]
        store.apply_summary_changes("u", [new], changes)  # idempotent
        counts = store.counts("u")
        assert (counts["summaries"], counts["active_summaries"]) == (3, 1)
        store.apply_summary_changes("u", [], [StatusChange(summary_id="g-s0", status=ACTIVE)])
        assert [i for i, _ in store.lexical_search(RowScope("u"), "Paris", 5)] == ["g-s0"]
        with pytest.raises(UserInputError):
            store.apply_summary_changes("u", [make_summary("other", "z", "not yours")], [])

    def test_the_same_ids_under_two_users_stay_apart(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _commit(store, "alice", "g", ["Alice rides horses"])
        _commit(store, "bob", "g", ["Bob plays chess"])
        store.apply_summary_changes("alice", [], [StatusChange(summary_id="g-s0", status=DELETED)])
        (bob,) = store.get_summaries("bob", statuses=None)
        assert (bob.user_id, bob.status, bob.text) == ("bob", ACTIVE, "Bob plays chess")
        _commit(store, "alice", "g", ["Alice rides ponies"])
        assert [s.text for s in store.get_summaries("bob")] == ["Bob plays chess"]
        assert [i for i, _ in store.lexical_search(RowScope("bob"), "chess", 5)] == ["g-s0"]

    def test_traces_round_trip_filtered_by_user_and_since(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        store.write_trace(
            {
                "trace_id": "b",
                "user_id": "u",
                "created_at": datetime(2024, 1, 2),
                "escalated": True,
                "iterations": 2,
                "stages": {"light": 1.5},
            }
        )
        store.write_trace({"trace_id": "a", "user_id": "u", "created_at": "2024-01-01T00:00:00"})
        store.write_trace({"trace_id": "c", "user_id": EVIL, "created_at": datetime(2024, 1, 3)})
        store.write_trace({"trace_id": "d", "user_id": "u"})  # created now
        traces = store.read_traces(user_id="u")
        assert [t["trace_id"] for t in traces] == ["a", "b", "d"]
        assert traces[1]["stages"] == {"light": 1.5} and traces[1]["escalated"] is True
        assert isinstance(traces[0]["created_at"], datetime)
        assert abs(traces[2]["created_at"] - utcnow()) < timedelta(minutes=5)  # naive UTC
        since = datetime(2024, 1, 2)
        assert [t["trace_id"] for t in store.read_traces(since=since)] == ["b", "c", "d"]
        for hours in (-5, 0, 3, 9):  # the same instant in other offsets selects the same traces
            aware = since.replace(tzinfo=UTC).astimezone(timezone(timedelta(hours=hours)))
            assert [t["trace_id"] for t in store.read_traces(since=aware)] == ["b", "c", "d"]
        assert [t["trace_id"] for t in store.read_traces(user_id=EVIL)] == ["c"]
        assert [t["trace_id"] for t in store.read_traces(user_id="u", trace_id="b")] == ["b"]
        assert store.read_traces(user_id="u", trace_id="c") == []  # another user's trace
        assert [t["trace_id"] for t in store.read_traces(trace_id="c")] == ["c"]
        assert store.counts("u")["traces"] == 3 and store.counts()["traces"] == 4
        with pytest.raises(UserInputError):
            store.write_trace({"user_id": "u"})

    def test_a_read_only_handle_reads_but_refuses_writes(self, storage_kit: StorageKit) -> None:
        writer = storage_kit.store
        _commit(writer, "u", "g", ["Alice adopted a cat"])
        reader = storage_kit.open_reader()
        assert reader.read_only is True
        for write in (
            lambda: reader.append_turns(make_turns("u", 1)),
            lambda: reader.commit_segments("u", [make_segment("u", "h")], [], []),
            lambda: reader.apply_summary_changes("u", [], []),
            lambda: reader.write_trace({"trace_id": "x"}),
            reader.reindex,
            reader.optimize,
        ):
            with pytest.raises(ReadOnlyStoreError):
                write()
        assert [i for i, _ in reader.lexical_search(RowScope("u"), "cat", 5)] == ["g-s0"]
        _commit(writer, "u", "h", ["Bob has a dog"])  # the reader sees later commits
        assert [i for i, _ in reader.lexical_search(RowScope("u"), "dog", 5)] == ["h-s0"]
        assert reader.counts("u")["summaries"] == 2

    def test_a_closed_store_refuses_every_call(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        store.close()
        for call in (
            lambda: store.counts(),
            lambda: store.get_turns("u"),
            lambda: store.lexical_search(RowScope("u"), "x", 1),
            lambda: store.append_turns(make_turns("u", 1)),
            lambda: store.read_traces(),
        ):
            with pytest.raises(StoreClosedError):
                call()
        store.close()  # idempotent

    def test_reindex_and_optimize_change_no_result(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _commit(store, "u", "g", ["alpha beta", "beta gamma", "gamma delta"], text="alpha raw")
        before = store.lexical_search(RowScope("u"), "beta gamma", 5), store.counts()
        seen: list[int] = []
        assert store.reindex(progress=seen.append) == {"summary": 3, "segment": 1}
        assert sum(seen) == 4
        store.optimize()
        assert (store.lexical_search(RowScope("u"), "beta gamma", 5), store.counts()) == before

    def test_replica_lag_is_none_with_one_writer_and_bounded_after_a_catch_up(
        self,
        storage_kit: StorageKit,
    ) -> None:
        store = storage_kit.store
        if storage_kit.kind != "s3":
            assert store.replica_lag_s() is None  # a folder or memory: never behind
            return
        store.catch_up()
        lag = store.replica_lag_s()
        assert lag is not None and 0.0 <= lag < 5.0


__all__ = ["StorageTests"]
