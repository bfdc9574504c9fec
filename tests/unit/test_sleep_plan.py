"""Decisions -> versions: conflicts, lineage and restore (the decisions themselves:
test_write_decisions.py)."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.core.types import Attribution, SummaryStatus
from hymem.sleep.plan import (
    lineage,
    plan_changes,
    plan_restore,
    resolve_conflicts,
)
from hymem.write.decisions import Decision, version_id

from tests.fixtures_sleep import summary

NOW = datetime(2026, 2, 1)


def test_conflicts_resolve_deterministically() -> None:
    ds = [
        Decision("a", "delete", evidence_id="x"),
        Decision("a", "update", text="B"),
        Decision("a", "update", text="A"),
        Decision("b", "ignore"),
        Decision("b", "delete"),
    ]
    for order in (ds, list(reversed(ds))):
        out = resolve_conflicts(order)
        assert [(d.target_id, d.action, d.text) for d in out] == [
            ("a", "update", "A"),
            ("b", "ignore", None),
        ]


def test_plan_update_and_delete() -> None:
    recs = {
        r.id: r
        for r in [
            summary("a", "User likes coffee", topic="food"),
            summary("b", "User prefers cappuccino", day=2),
            summary("c", "User lives in New York"),
            summary("d", "User moved to San Francisco", day=3),
        ]
    }
    plan = plan_changes(
        "u1",
        [
            Decision(
                "a", "update", text="User likes coffee, especially cappuccino", evidence_id="b"
            ),
            Decision("c", "delete", evidence_id="d", reason="moved"),
            Decision("b", "ignore"),
        ],
        recs,
        now=NOW,
    )
    (new,) = plan.new
    assert new.id == version_id("a", 2, new.text) and new.version == 2
    assert (new.previous_id, new.segment_id, new.origin, new.status) == (
        "a",
        "seg-a",
        "consolidated",
        SummaryStatus.ACTIVE,
    )
    assert new.time_start == recs["a"].time_start and new.time_end == recs["b"].time_end
    assert new.topic == "food" and new.vector is None
    by_id = {c.summary_id: c for c in plan.changes}
    assert by_id["a"].status == SummaryStatus.SUPERSEDED and by_id["a"].superseded_by == new.id
    assert by_id["c"].status == SummaryStatus.DELETED and by_id["c"].evidence_id == "d"
    assert by_id["c"].reason == "moved" and "b" not in by_id
    assert {p.action for p in plan.planned} == {"update", "delete"}


def test_a_merged_version_carries_the_union_of_its_inputs_sources() -> None:
    recs = {
        r.id: r
        for r in [
            summary("a", "User likes coffee", source_turn_ids=["t1"], attribution="source"),
            summary(
                "b", "User prefers cappuccino", source_turn_ids=["t7", "t1"], attribution="model"
            ),
        ]
    }
    decision = Decision(
        "a", "update", text="User likes coffee, especially cappuccino", evidence_id="b"
    )
    (new,) = plan_changes("u1", [decision], recs, now=NOW).new
    assert new.source_turn_ids == ["t1", "t7"] and new.attribution is Attribution.MODEL
    (alone,) = plan_changes(
        "u1", [Decision("a", "update", text="User likes tea")], recs, now=NOW
    ).new
    assert alone.source_turn_ids == ["t1"] and alone.attribution is Attribution.SOURCE


def test_plan_skips_inactive_targets_and_does_not_redo_restored_merges() -> None:
    a = summary("a", "User likes tea")
    gone = summary("g", "gone", status=SummaryStatus.DELETED)
    merged_id = version_id("a", 2, "User likes green tea")
    undone = summary(
        merged_id,
        "User likes green tea",
        version=2,
        previous_id="a",
        status=SummaryStatus.SUPERSEDED,
        superseded_by="a",
    )
    recs = {r.id: r for r in (a, gone, undone)}
    plan = plan_changes(
        "u1",
        [Decision("a", "update", text="User likes green tea"), Decision("g", "delete")],
        recs,
        now=NOW,
    )
    assert plan.new == [] and plan.changes == []


def test_plan_completes_a_half_applied_merge_without_a_second_insert() -> None:
    a = summary("a", "User likes tea")
    nid = version_id("a", 2, "User likes green tea")
    half = summary(nid, "User likes green tea", version=2, previous_id="a")
    plan = plan_changes(
        "u1", [Decision("a", "update", text="User likes green tea")], {"a": a, nid: half}, now=NOW
    )
    assert plan.new == [] and plan.changes[0].superseded_by == nid


def test_lineage_and_restore() -> None:
    v1 = summary("v1", "one", status=SummaryStatus.SUPERSEDED, superseded_by="v2")
    v2 = summary(
        "v2",
        "two",
        version=2,
        previous_id="v1",
        status=SummaryStatus.SUPERSEDED,
        superseded_by="v3",
        created=5,
    )
    v3 = summary("v3", "three", version=3, previous_id="v2", created=9)
    other = summary("o", "other", status=SummaryStatus.DELETED)
    recs = {r.id: r for r in (v3, other, v1, v2)}
    assert [r.id for r in lineage("v2", recs)] == ["v1", "v2", "v3"]
    assert [r.id for r in lineage("o", recs)] == ["o"] and lineage("nope", recs) == []
    react, retire = plan_restore("v1", recs)
    assert (react.summary_id, react.status, react.superseded_by) == ("v1", "active", None)
    assert retire is not None and (retire.summary_id, retire.superseded_by) == ("v3", "v1")
    react, retire = plan_restore("o", recs)
    assert react.summary_id == "o" and retire is None
    with pytest.raises(ValueError):
        plan_restore("v3", recs)
