"""The whole sleep over the real in-memory store, scripted roles and an in-memory journal."""

from __future__ import annotations

from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import (
    LLMAuthError,
    LLMUnavailable,
    ReadOnlyStoreError,
    UserInputError,
    VersionConflictError,
)
from hymem.core.types import SummaryRecord, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.llm.roles import ContextItem
from hymem.sleep.consolidator import Consolidator
from hymem.sleep.journal import SleepJournal

from tests.doubles import ScriptedRoles
from tests.fixtures_sleep import summary, summary_store
from tests.fixtures_store import RecordingStore, all_summaries

TOPICS = ["coffee", "home", "trip", "pets"]


def topical(
    sid: str, text: str, topic: str, *, user_id: str = "u1", day: int = 0, wobble: float = 0.0
) -> SummaryRecord:
    """A summary whose vector points along its topic's axis (queues are then predictable)."""
    vec = [0.0] * 256  # HashingEmbedder's dimension, which re-embeds merged versions
    vec[TOPICS.index(topic)] = 1.0
    vec[len(TOPICS)] = wobble
    return summary(sid, text, user_id=user_id, day=day, created=day, vector=vec)


def corpus(user_id: str = "u1") -> list[SummaryRecord]:
    p = f"{user_id}-"
    return [
        topical(p + "coffee1", "User likes coffee", "coffee", user_id=user_id, day=0),
        topical(
            p + "coffee2",
            "User prefers cappuccino in the mornings",
            "coffee",
            user_id=user_id,
            day=1,
            wobble=0.1,
        ),
        topical(p + "home1", "User lives in New York", "home", user_id=user_id, day=0),
        topical(
            p + "home2",
            "User moved to San Francisco in 2023",
            "home",
            user_id=user_id,
            day=2,
            wobble=0.1,
        ),
        topical(p + "trip1", "User plans a trip to Tokyo in May", "trip", user_id=user_id, day=0),
        topical(
            p + "trip2",
            "User asked about visiting Kyoto",
            "trip",
            user_id=user_id,
            day=3,
            wobble=0.1,
        ),
        topical(p + "pets1", "User has a dog named Rex", "pets", user_id=user_id, day=0),
    ]


def decide(target: ContextItem, newer: list[ContextItem]) -> dict[str, Any]:
    """Each decision kind, keyed on the target, like LightMem's examples."""
    if "coffee" in target.id:
        return {
            "action": "update",
            "text": "User likes coffee, especially cappuccino in the mornings",
            "evidence_id": newer[0].id,
            "reason": "refinement",
        }
    if "home" in target.id:
        return {"action": "delete", "evidence_id": newer[0].id, "reason": "moved"}
    if "trip" in target.id:  # a lossy merge: the guard must refuse it
        return {
            "action": "update",
            "text": "User asked about visiting Kyoto",
            "evidence_id": newer[0].id,
        }
    return {"action": "ignore"}


def make(
    records: list[SummaryRecord],
    roles: ScriptedRoles | None = None,
    *,
    read_only: bool = False,
    **cfg: Any,
) -> tuple[Consolidator, RecordingStore, ScriptedRoles, SleepJournal]:
    """A Consolidator over a store holding `records` (through a read-only handle when asked)."""
    store = summary_store(records)
    roles = roles or ScriptedRoles(update=decide)
    journal = SleepJournal(None)
    config = MemoryConfig.defaults(sleep_similarity_floor=0.5, **cfg)
    handle = store.read_only_view() if read_only else store
    cons = Consolidator(handle, HashingEmbedder(), lambda: roles, config, journal=journal)
    return cons, store, roles, journal


def test_each_decision_kind_is_applied_as_versions() -> None:
    cons, store, roles, _ = make(corpus())
    report = cons.sleep(max_workers=3)
    assert report.queues_built == 3 and report.asked == 3 and len(roles.calls) == 3
    assert report.decisions == {"update": 1, "delete": 1, "ignore": 0, "rejected": 1}
    assert (report.new_versions, report.superseded, report.deleted) == (1, 1, 1)
    assert report.model_calls == 3 and report.prompt_tokens > 0 and report.seconds > 0
    rows = all_summaries(store)
    old = rows["u1-coffee1"]
    assert old.status == SummaryStatus.SUPERSEDED and old.text == "User likes coffee"
    new = rows[old.superseded_by or ""]
    assert new.status == SummaryStatus.ACTIVE and new.origin == "consolidated"
    assert new.previous_id == old.id and new.version == 2 and new.segment_id == old.segment_id
    assert new.vector is not None and len(new.vector) == 256
    assert rows["u1-home1"].status == SummaryStatus.DELETED
    assert rows["u1-home1"].evidence_id == "u1-home2" and rows["u1-home1"].reason == "moved"
    assert rows["u1-trip1"].status == SummaryStatus.ACTIVE  # Tokyo kept: the merge was refused
    assert [r.id for r in cons.history("u1-coffee1", user_id="u1")] == ["u1-coffee1", new.id]
    # the newer summaries themselves are untouched
    assert all(rows[i].status == SummaryStatus.ACTIVE for i in ("u1-coffee2", "u1-home2"))


def test_sleep_twice_changes_nothing_and_asks_nothing() -> None:
    cons, store, roles, _ = make(corpus())
    cons.sleep(max_workers=2)
    before = {k: v.model_dump() for k, v in all_summaries(store).items()}
    calls = len(roles.calls)
    again = cons.sleep(max_workers=2)
    assert len(roles.calls) == calls and again.model_calls == 0 and again.asked == 0
    assert again.new_versions == again.superseded == again.deleted == 0
    assert {k: v.model_dump() for k, v in all_summaries(store).items()} == before
    assert again.skipped_from_journal + again.settled == again.queues_built


def test_new_information_is_asked_about_and_old_news_is_not() -> None:
    cons, store, roles, _ = make(corpus())
    cons.sleep()
    roles.calls.clear()
    newer = topical("u1-pets2", "User adopted a second dog", "pets", day=9, wobble=0.2)
    later = summary("x", "x", created=999).created_at
    store.commit_segments("u1", [], [newer.model_copy(update={"created_at": later})], [])
    report = cons.sleep()
    assert [target for target, _ in roles.updates()] == ["u1-pets1"] and report.asked == 1


def test_users_never_interact() -> None:
    cons, store, roles, _ = make(corpus("alice") + corpus("bob"))
    cons.sleep(max_workers=4)
    for target, queue in roles.updates():
        owner = target.split("-")[0]
        assert all(q.startswith(owner + "-") for q in queue)
    assert len(roles.calls) == 6
    rows = all_summaries(store)
    for user, new_ids, changes in store.applied:
        touched = [*new_ids, *(c.summary_id for c in changes)]
        assert {rows[i].user_id for i in touched} == {user}
    only_bob = make(corpus("alice") + corpus("bob"))
    only_bob[0].sleep(user_id="bob")
    assert {t.split("-")[0] for t, _ in only_bob[2].updates()} == {"bob"}
    alice = all_summaries(only_bob[1], "alice").values()
    assert all(r.status == SummaryStatus.ACTIVE for r in alice)


def test_dry_run_writes_nothing_and_lists_the_plan() -> None:
    cons, store, _, journal = make(corpus())
    before = {k: v.model_dump() for k, v in all_summaries(store).items()}
    report = cons.sleep(dry_run=True)
    assert report.dry_run and {p.action for p in report.planned} == {"update", "delete"}
    assert {k: v.model_dump() for k, v in all_summaries(store).items()} == before
    assert store.applied == [] and len(journal) == 0
    ro = make(corpus(), read_only=True)
    with pytest.raises(ReadOnlyStoreError):
        ro[0].sleep()
    assert ro[0].sleep(dry_run=True).planned


def test_model_failures_lose_nothing_and_are_retried_next_time() -> None:
    state = {"fail": True}

    def flaky(target: ContextItem, newer: list[ContextItem]) -> dict[str, Any]:
        if "home" in target.id and state["fail"]:
            raise LLMUnavailable("down", role="update")
        return decide(target, newer)

    cons, store, roles, _ = make(corpus(), ScriptedRoles(update=flaky))
    report = cons.sleep()
    assert report.failed == 1 and report.decisions["update"] == 1
    assert all_summaries(store)["u1-home1"].status == SummaryStatus.ACTIVE
    state["fail"] = False
    roles.calls.clear()
    report = cons.sleep()
    assert [target for target, _ in roles.updates()] == ["u1-home1"] and report.deleted == 1


def test_auth_error_stops_the_sleep_with_nothing_applied() -> None:
    def denied(target: ContextItem, newer: list[ContextItem]) -> dict[str, Any]:
        raise LLMAuthError("401", role="update", status_code=401)

    cons, store, _, _ = make(corpus(), ScriptedRoles(update=denied))
    with pytest.raises(LLMAuthError):
        cons.sleep(max_workers=1)
    # only the fact pass's key fills (metadata, before any model) went in: no version moved
    changes = [c for _, new, cs in store.applied for c in cs if not new]
    assert all(new == [] for _, new, _ in store.applied)
    assert all(c.status == SummaryStatus.ACTIVE and c.fact_key for c in changes)


def test_restore_reactivates_and_the_next_sleep_does_not_redo_it() -> None:
    cons, store, roles, _ = make(corpus())
    cons.sleep()
    merged = all_summaries(store)["u1-coffee1"].superseded_by or ""
    restored = cons.restore("u1-coffee1", user_id="u1")
    assert restored.status == SummaryStatus.ACTIVE and restored.superseded_by is None
    assert all_summaries(store)[merged].status == SummaryStatus.SUPERSEDED
    assert all_summaries(store)[merged].superseded_by == "u1-coffee1"
    assert cons.restore("u1-home1", user_id="u1").status == SummaryStatus.ACTIVE
    assert len(cons.history("u1-coffee1", user_id="u1")) == 2
    calls = len(roles.calls)
    report = cons.sleep()
    assert len(roles.calls) == calls and report.new_versions == report.deleted == 0
    assert all_summaries(store)["u1-coffee1"].status == SummaryStatus.ACTIVE
    with pytest.raises(VersionConflictError):
        cons.restore("u1-coffee1", user_id="u1")  # already active
    with pytest.raises(UserInputError):
        cons.restore("u1-coffee1", user_id="someone-else")  # isolation: not found
    with pytest.raises(UserInputError):
        cons.history("nope", user_id="u1")


def test_bad_worker_count_is_a_user_error() -> None:
    with pytest.raises(UserInputError):
        make(corpus())[0].sleep(max_workers=0)


def test_a_half_applied_merge_is_completed_before_anything_else() -> None:
    """A crash between inserting a version and retiring the old one leaves both active."""
    recs = corpus()
    old = recs[0]
    half = topical("u1-coffee1-v2", "User likes coffee, mostly cappuccino", "coffee").model_copy(
        update={"previous_id": old.id, "version": 2, "origin": "consolidated"}
    )
    cons, store, roles, _ = make([*recs, half])
    dry = cons.sleep(dry_run=True)
    assert dry.repaired == 1 and all_summaries(store)[old.id].status == SummaryStatus.ACTIVE
    report = cons.sleep()
    assert report.repaired == 1
    assert all_summaries(store)[old.id].status == SummaryStatus.SUPERSEDED
    assert all_summaries(store)[old.id].superseded_by == half.id
    assert old.id not in {t for t, _ in roles.updates()}  # a retired version is never a target
    assert cons.sleep().repaired == 0
