"""On every `Storage`: memory ids and fact keys as read keys, validity in time as a
search filter (`RowScope.valid_at` / `RowScope.admits`), and the batched dense search that
write-time consolidation uses. Runs once per store kit, like the rest of the conformance suite.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from hymem.core.types import Level, StatusChange, SummaryStatus
from hymem.indexes.protocol import RowScope
from hymem.testing.records import BASE_TIME, StorageKit, make_segment, make_summary
from hymem.testing.records import text_vector as vec

LATER = BASE_TIME + timedelta(days=30)


def _facts(kit: StorageKit) -> None:
    """Lisbon (said at BASE_TIME, superseded by Porto said 30 days later), Porto, and a dog."""
    store = kit.store
    sums = [
        make_summary("u", "lisbon", "Ann lives in Lisbon", segment_id="g", fact_key="ann|lives_in"),
        make_summary(
            "u", "porto", "Ann lives in Porto", segment_id="g", start=LATER, fact_key="ann|lives_in"
        ),
        make_summary("u", "dog", "Ann has a dog named Rex", segment_id="g"),
    ]
    store.commit_segments("u", [make_segment("u", "g", "Ann: I live in Lisbon")], sums, [])
    change = StatusChange(
        summary_id="lisbon",
        status=SummaryStatus.SUPERSEDED,
        superseded_by="porto",
        evidence_id="porto",
        valid_to=LATER,
    )
    store.apply_summary_changes("u", [], [change])


def _dense(kit: StorageKit, scope: RowScope, text: str) -> set[str]:
    return {i for i, _ in kit.store.dense_search(scope, vec(text), 10)}


def _lexical(kit: StorageKit, scope: RowScope, text: str) -> set[str]:
    return {i for i, _ in kit.store.lexical_search(scope, text, 10)}


class ValidityTests:
    """The suite; a subclass supplies `storage_kit` (see `hymem.testing`)."""

    @pytest.mark.parametrize("search", [_dense, _lexical])
    def test_a_fact_superseded_later_matches_as_of_a_moment_before_its_end(
        self, storage_kit: StorageKit, search: object
    ) -> None:
        _facts(storage_kit)
        find = search  # type narrowing for the two search helpers
        assert callable(find)
        now = RowScope("u")
        before = RowScope(
            "u", time_range=(None, LATER - timedelta(days=1)), valid_at=LATER - timedelta(days=1)
        )
        after = RowScope(
            "u", time_range=(None, LATER + timedelta(days=1)), valid_at=LATER + timedelta(days=1)
        )
        assert "lisbon" not in find(storage_kit, now, "Ann lives in Lisbon")
        assert "lisbon" in find(storage_kit, before, "Ann lives in Lisbon")
        assert "porto" not in find(storage_kit, before, "Ann lives in Porto")  # not said yet
        assert "lisbon" not in find(storage_kit, after, "Ann lives in Lisbon")
        assert "porto" in find(storage_kit, after, "Ann lives in Porto")
        assert (
            storage_kit.store.get_summaries("u", ids=["lisbon"], statuses=None)[0].valid_to == LATER
        )

    def test_admits_is_the_one_rule(self) -> None:
        scope = RowScope("u", valid_at=BASE_TIME)
        assert scope.admits("active", None)
        assert scope.admits("superseded", BASE_TIME + timedelta(seconds=1))
        assert not scope.admits("superseded", BASE_TIME)  # ended at that very moment
        assert not scope.admits("superseded", None)  # a rewritten version, not an ended fact
        assert not scope.admits("deleted", BASE_TIME + timedelta(days=1))
        assert not RowScope("u").admits("superseded", BASE_TIME + timedelta(days=1))
        assert RowScope("u", statuses=None).admits("deleted", None)

    def test_summaries_are_read_by_memory_id_and_by_fact_key(self, storage_kit: StorageKit) -> None:
        _facts(storage_kit)
        store = storage_kit.store
        version = make_summary(
            "u",
            "dog2",
            "Ann has a beagle named Rex",
            segment_id="g",
            memory_id="dog",
            version=2,
            previous_id="dog",
        )
        store.apply_summary_changes(
            "u",
            [version],
            [StatusChange(summary_id="dog", status=SummaryStatus.SUPERSEDED, superseded_by="dog2")],
        )
        got = store.get_summaries("u", memory_ids=["dog"], statuses=None)
        assert sorted(s.id for s in got) == ["dog", "dog2"]
        assert store.get_summaries("u", memory_ids=["dog"])[0].id == "dog2"  # the active one
        keyed = store.get_summaries("u", fact_keys=["ann|lives_in"], statuses=None)
        assert sorted(s.id for s in keyed) == ["lisbon", "porto"]
        assert [s.id for s in store.get_summaries("u", fact_keys=["ann|lives_in"])] == ["porto"]
        assert store.get_summaries("other", memory_ids=["dog"], statuses=None) == []

    def test_the_batched_dense_search_equals_one_search_per_vector(
        self, storage_kit: StorageKit
    ) -> None:
        _facts(storage_kit)
        store = storage_kit.store
        texts = ("Ann lives in Porto", "a dog named Rex", "nothing alike", "Lisbon", "a cat", "Rex")
        queries = [vec(t) for t in texts]
        scopes = (RowScope("u"), RowScope("u", statuses=None), RowScope("u", level=Level.SEGMENT))
        # a few vectors are scanned one product each, many in one matrix product: both agree
        for scope, batch in itertools.product(scopes, (queries[:2], queries)):
            many = store.dense_search_many(scope, batch, 2)
            one = [store.dense_search(scope, q, 2) for q in batch]
            assert [[i for i, _ in hits] for hits in many] == [[i for i, _ in hits] for hits in one]
            for a, b in zip(many, one, strict=True):
                assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)
        queries = queries[:3]
        assert store.dense_search_many(RowScope("nobody"), queries, 2) == [[], [], []]
        assert store.dense_search_many(RowScope("u"), [], 2) == []

    @pytest.mark.parametrize("search", [_dense, _lexical])
    def test_a_commit_carries_status_changes_of_older_summaries(
        self, storage_kit: StorageKit, search: object
    ) -> None:
        """Write-time consolidation folded into the flush: the commit that writes Porto ends
        Lisbon (unknown ids skipped), and both searches see the new state at once."""
        store = storage_kit.store
        find = search
        assert callable(find)
        old = make_summary("u", "lisbon", "Ann lives in Lisbon", segment_id="g1")
        store.commit_segments("u", [make_segment("u", "g1", "Ann: I live in Lisbon")], [old], [])
        assert "lisbon" in find(storage_kit, RowScope("u"), "Ann lives in Lisbon")
        new = make_summary("u", "porto", "Ann lives in Porto", segment_id="g2", start=LATER)
        ended = StatusChange(
            summary_id="lisbon",
            status=SummaryStatus.SUPERSEDED,
            superseded_by="porto",
            evidence_id="porto",
            valid_to=LATER,
        )
        unknown = ended.model_copy(update={"summary_id": "nowhere"})
        store.commit_segments(
            "u",
            [make_segment("u", "g2", "Ann: I live in Porto")],
            [new],
            [],
            changes=[ended, unknown],
        )
        assert "lisbon" not in find(storage_kit, RowScope("u"), "Ann lives in Lisbon")
        assert "porto" in find(storage_kit, RowScope("u"), "Ann lives in Porto")
        got = store.get_summaries("u", ids=["lisbon"], statuses=None)[0]
        assert (got.status, got.superseded_by, got.valid_to) == (
            SummaryStatus.SUPERSEDED,
            "porto",
            LATER,
        )
        assert store.get_summaries("u", ids=["nowhere"], statuses=None) == []


__all__ = ["ValidityTests"]
