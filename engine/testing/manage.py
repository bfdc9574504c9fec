"""The management primitives of every `Storage`: keyset paging (`page`) and erasure
(`erase_user`), run once per implementation like the rest of the conformance suite.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from hymem.core.errors import CommitConflictError, ReadOnlyStoreError
from hymem.core.types import Level, StatusChange, SummaryStatus, TurnStatus
from hymem.indexes.ports import Storage
from hymem.indexes.protocol import RowScope
from hymem.testing.records import (
    BASE_TIME,
    EVIL,
    StorageKit,
    make_segment,
    make_summary,
    make_turns,
)


def _fill(store: Storage, user: str, n: int) -> None:
    """n turns, n segments (one per turn) and n summaries created a second apart."""
    store.append_turns(make_turns(user, n))
    for i in range(n):
        when = BASE_TIME + timedelta(seconds=i)
        seg = make_segment(user, f"seg{i:02d}", f"raw {user} {i}", turn_ids=[f"t{i}"])
        seg = seg.model_copy(update={"created_at": when})
        summ = make_summary(
            user, f"sum{i:02d}", f"fact {user} {i}", segment_id=seg.id, created=when
        )
        store.commit_segments(user, [seg], [summ], [f"t{i}"])


def _walk(store: Storage, user: str, level: str, limit: int, **kw: object) -> list[str]:
    ids: list[str] = []
    after = None
    while True:
        page = store.page(user, level, after=after, limit=limit, **kw)  # type: ignore[arg-type]  # the suite's keyword filters pass through untyped
        ids.extend(r.id for r in page)
        if len(page) < limit:
            return ids
        last = page[-1]
        after = (getattr(last, "seq", None) if level == "turn" else last.created_at, last.id)


class ManageTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    @pytest.mark.parametrize("level", ["turn", "segment", "summary"])
    def test_pages_cover_every_record_once_in_order(
        self, storage_kit: StorageKit, level: str
    ) -> None:
        store = storage_kit.store
        _fill(store, "alice", 7)
        _fill(store, "bob", 2)
        prefix = {"turn": "t", "segment": "seg", "summary": "sum"}[level]
        want = [f"{prefix}{i}" if level == "turn" else f"{prefix}{i:02d}" for i in range(7)]
        for limit in (1, 3, 7, 50):
            assert _walk(store, "alice", level, limit) == want
        records = store.page("alice", level, limit=2)
        assert all(getattr(r, "vector", None) is None for r in records)
        assert store.page("nobody", level) == [] and store.page(EVIL, level) == []

    def test_pages_filter_by_status(self, storage_kit: StorageKit) -> None:
        store = storage_kit.store
        _fill(store, "alice", 4)
        store.append_turns(make_turns("alice", 6)[4:])  # t4, t5 stay pending
        change = StatusChange(summary_id="sum01", status=SummaryStatus.DELETED, reason="x")
        store.apply_summary_changes("alice", [], [change])
        assert _walk(store, "alice", "summary", 2, statuses=["active"]) == [
            "sum00",
            "sum02",
            "sum03",
        ]
        assert _walk(store, "alice", "summary", 2, statuses=["deleted"]) == ["sum01"]
        assert len(_walk(store, "alice", "summary", 2)) == 4
        pending = store.page("alice", "turn", statuses=[TurnStatus.PENDING.value])
        assert [t.id for t in pending] == ["t4", "t5"]

    def test_a_page_started_after_a_key_skips_records_written_meanwhile_before_it(
        self,
        storage_kit: StorageKit,
    ) -> None:
        store = storage_kit.store
        _fill(store, "alice", 3)
        first = store.page("alice", "summary", limit=2)
        late = make_summary("alice", "sum-late", "late", created=BASE_TIME + timedelta(hours=1))
        store.commit_segments("alice", [make_segment("alice", "seg-late")], [late], [])
        rest = store.page("alice", "summary", after=(first[-1].created_at, first[-1].id), limit=10)
        assert [r.id for r in rest] == ["sum02", "sum-late"]

    def test_erase_user_removes_every_record_of_that_user_only(
        self, storage_kit: StorageKit
    ) -> None:
        store = storage_kit.store
        _fill(store, "alice", 3)
        _fill(store, "bob", 3)
        store.write_trace({"trace_id": "ta", "user_id": "alice", "question": "q"})
        store.write_trace({"trace_id": "tb", "user_id": "bob", "question": "q"})
        removed = store.erase_user("alice")
        assert removed == {"turns": 3, "segments": 3, "summaries": 3, "traces": 1}
        assert store.counts("alice") == dict.fromkeys(
            ["turns", "pending_turns", "segments", "summaries", "active_summaries", "traces"], 0
        )
        assert store.users() == ["bob"]
        assert store.lexical_search(RowScope("alice"), "fact alice", 10) == []
        query = storage_kit.embedder.embed(["fact bob 1"])[0]
        assert store.dense_search(RowScope("alice"), query, 10) == []
        assert store.counts("bob")["summaries"] == 3
        assert [
            i for i, _ in store.lexical_search(RowScope("bob", level=Level.SUMMARY), "fact bob", 10)
        ]
        assert store.dense_search(RowScope("bob"), query, 1)[0][0] == "sum01"
        assert [t["trace_id"] for t in store.read_traces()] == ["tb"]
        _fill(store, "alice", 1)  # the user id can be used again afterwards
        assert store.counts("alice")["summaries"] == 1
        assert store.erase_user("nobody") == {
            "turns": 0,
            "segments": 0,
            "summaries": 0,
            "traces": 0,
        }
        assert store.erase_user(EVIL)["turns"] == 0 and store.counts("bob")["turns"] == 3

    def test_erase_user_is_refused_on_a_read_only_handle(self, storage_kit: StorageKit) -> None:
        _fill(storage_kit.store, "alice", 1)
        reader = storage_kit.open_reader()
        with pytest.raises(ReadOnlyStoreError):
            reader.erase_user("alice")
        assert storage_kit.store.counts("alice")["turns"] == 1

    def test_withdraw_removes_exactly_the_given_records(self, storage_kit: StorageKit) -> None:
        """What an aborted import wrote goes; what the user held before and other users stay."""
        store = storage_kit.store
        _fill(store, "alice", 4)
        _fill(store, "bob", 2)
        store.apply_summary_changes(  # a second version linked to seg02 goes with it
            "alice",
            [make_summary("alice", "sum02b", "fact alice 2 again", segment_id="seg02")],
            [
                StatusChange(
                    summary_id="sum02", status=SummaryStatus.SUPERSEDED, superseded_by="sum02b"
                )
            ],
        )
        removed = store.withdraw("alice", ["t2", "t9"], ["seg02", "seg03", "nope"])
        assert removed == {"turns": 1, "segments": 2, "summaries": 3}
        kept = {t.id: (t.status, t.segment_id) for t in store.get_turns("alice")}
        assert kept == {
            "t0": (TurnStatus.STORED, "seg00"),
            "t1": (TurnStatus.STORED, "seg01"),
            "t3": (TurnStatus.PENDING, None),  # its segment went: it waits for one again
        }
        assert sorted(s.id for s in store.get_summaries("alice", statuses=None)) == [
            "sum00",
            "sum01",
        ]
        assert store.get_segments("alice", ["seg00", "seg02"])[0].id == "seg00"
        assert len(store.get_segments("alice", ["seg02", "seg03"])) == 0
        hits = store.lexical_search(RowScope("alice", level=Level.SUMMARY), "fact alice", 10)
        assert sorted(i for i, _ in hits) == ["sum00", "sum01"]
        query = storage_kit.embedder.embed(["fact alice 3"])[0]
        assert {i for i, _ in store.dense_search(RowScope("alice"), query, 10)} <= {
            "sum00",
            "sum01",
        }
        assert store.counts("bob")["summaries"] == 2 and store.counts("bob")["turns"] == 2
        assert store.withdraw("alice", ["t2"], ["seg02"]) == {
            "turns": 0,
            "segments": 0,
            "summaries": 0,
        }
        reader = storage_kit.open_reader()
        with pytest.raises(ReadOnlyStoreError):
            reader.withdraw("alice", ["t0"], [])
        assert store.counts("alice")["turns"] == 3

    def test_a_commit_claiming_turns_another_segment_holds_is_refused(
        self,
        storage_kit: StorageKit,
    ) -> None:
        """A fenced writer, in depth: whatever a stale writer sends, no turn ends in two segments
        and nothing of the refused commit is written; re-committing the same segment still works."""
        store = storage_kit.store
        _fill(store, "alice", 2)
        seg = make_segment("alice", "segX", "raw again", turn_ids=["t0", "t1"])
        summ = make_summary("alice", "sumX", "fact alice again", segment_id="segX")
        with pytest.raises(CommitConflictError, match="'t0' \\(in 'seg00'\\)"):
            store.commit_segments("alice", [seg], [summ], ["t0", "t1"])
        assert store.counts("alice")["segments"] == 2 and store.counts("alice")["summaries"] == 2
        assert {t.segment_id for t in store.get_turns("alice")} == {"seg00", "seg01"}
        again = make_segment("alice", "seg00", "raw alice 0", turn_ids=["t0"])
        store.commit_segments(
            "alice", [again], [make_summary("alice", "sum00", "f", segment_id="seg00")], ["t0"]
        )
        assert store.counts("alice")["summaries"] == 2

    @pytest.mark.parametrize("level", ["turn", "segment", "summary"])
    def test_pages_filter_by_metadata_before_the_cut(
        self, storage_kit: StorageKit, level: str
    ) -> None:
        from hymem.core.filters import Filter

        store = storage_kit.store
        turns = [
            t.model_copy(update={"metadata": {"agent_id": "a1" if i % 2 else "a2", "n": i}})
            for i, t in enumerate(make_turns("alice", 6))
        ]
        store.append_turns(turns)
        for t in turns:
            when = BASE_TIME + timedelta(seconds=t.seq)
            seg = make_segment("alice", f"seg{t.seq}", turn_ids=[t.id])
            seg = seg.model_copy(update={"created_at": when, "metadata": t.metadata})
            summ = make_summary(
                "alice",
                f"sum{t.seq}",
                f"fact {t.seq}",
                segment_id=seg.id,
                created=when,
                metadata=t.metadata,
            )
            store.commit_segments("alice", [seg], [summ], [t.id])
        odd = Filter.parse({"agent_id": "a1", "n": {"gte": 2}})
        want = {"turn": ["t3", "t5"], "segment": ["seg3", "seg5"], "summary": ["sum3", "sum5"]}
        assert _walk(store, "alice", level, 1, filters=odd) == want[level]
        assert store.page("alice", level, filters=Filter.parse({"agent_id": EVIL})) == []


__all__ = ["ManageTests"]
