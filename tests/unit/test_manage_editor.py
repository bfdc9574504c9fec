"""get/get_all/update/delete on the in-memory twin: ids are scoped by user, corrections are
versions, caller mistakes are typed, and a page cursor cannot be forged into anything else."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hymem.core.errors import (
    NotFoundError,
    ReadOnlyStoreError,
    UserInputError,
    VersionConflictError,
)
from hymem.core.types import SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.manage import cursor
from hymem.manage.editor import Editor, check_listing
from hymem.sleep.plan import plan_restore
from hymem.write.guard import WriteGuard

from tests.fixtures_store import EVIL, make_segment, make_summary, make_turns

NOW = datetime(2026, 1, 1, 12, 0)


@pytest.fixture
def store() -> InMemoryStore:
    """Two users, three linked segment/summary pairs each."""
    store = InMemoryStore(64)
    for user in ("alice", "bob"):
        store.append_turns(make_turns(user, 4))
        for i in range(3):
            seg = make_segment(user, f"seg{i}", turn_ids=[f"t{i}"])
            summ = make_summary(
                user,
                f"sum{i}",
                f"{user} fact {i}",
                segment_id=seg.id,
                created=NOW + timedelta(seconds=i),
                source_turn_ids=[f"t{i}"],
            )
            store.commit_segments(user, [seg], [summ], [f"t{i}"])
    return store


@pytest.fixture
def editor(store: InMemoryStore) -> Editor:
    return Editor(store, HashingEmbedder(64), guard=WriteGuard(store), clock=lambda: NOW)


def test_get_returns_the_summary_with_its_links(editor: Editor) -> None:
    item = editor.get("sum1", "alice")
    assert item.summary.text == "alice fact 1" and item.summary.vector is None
    assert [t.id for t in item.source_turns] == ["t1"]
    assert item.segment is not None and item.segment.id == "seg1"
    assert item.version_ids == ["sum1"]


@pytest.mark.parametrize("memory_id", ["nope", EVIL, "sum1'--"])
def test_unknown_and_other_users_ids_are_the_same_not_found(editor: Editor, memory_id: str) -> None:
    with pytest.raises(NotFoundError) as unknown:
        editor.get(memory_id, "alice")
    assert memory_id in str(unknown.value)
    with pytest.raises(NotFoundError) as foreign:
        editor.get("sum1", "carol")  # bob and alice hold sum1; carol holds nothing
    assert "carol" not in str(foreign.value) and "alice" not in str(foreign.value)
    with pytest.raises(NotFoundError):
        editor.update("sum1", "x", "carol")
    with pytest.raises(NotFoundError):
        editor.delete("sum1", "carol")


def test_update_writes_a_new_version_and_delete_a_restorable_tombstone(
    editor: Editor, store: InMemoryStore
) -> None:
    new = editor.update("sum0", "alice fact zero, corrected", "alice")
    assert (new.version, new.previous_id, new.origin, new.status.value) == (
        2,
        "sum0",
        "user",
        "active",
    )
    assert new.source_turn_ids == ["t0"] and new.segment_id == "seg0"
    assert editor.get(new.id, "alice").version_ids == ["sum0", new.id]
    old = editor.summary("sum0", "alice")
    assert (old.status, old.superseded_by, old.reason) == (
        SummaryStatus.SUPERSEDED,
        new.id,
        "updated by the user",
    )
    assert editor.update(new.id, new.text, "alice").id == new.id  # same text: no new version
    assert new.memory_id == "sum0"  # the memory keeps the id the agent was given
    assert editor.get("sum0", "alice").summary.id == new.id  # the memory id reads its current
    assert editor.get(new.id, "alice").summary.id == new.id  # a version id reads that version
    again = editor.update("sum0", "alice fact zero, again", "alice")  # by the memory id
    assert (again.version, again.previous_id, again.memory_id) == (3, new.id, "sum0")
    tomb = editor.delete("sum0", "alice")  # the id the agent kept, not the newest version's
    assert (tomb.status, tomb.origin, tomb.version) == (SummaryStatus.DELETED, "user", 4)
    assert tomb.memory_id == "sum0"
    assert editor.delete(tomb.id, "alice").id == tomb.id  # deleting twice is not an error
    assert editor.delete("sum0", "alice").id == tomb.id
    with pytest.raises(VersionConflictError, match=r"deleted.*restore"):
        editor.update("sum0", "after the delete", "alice")  # a state conflict: 409 over HTTP
    assert [v.id for v in editor.versions(new.id, "alice")] == ["sum0", new.id, again.id, tomb.id]
    active = editor.get_all("alice").items
    assert [r.id for r in active] == ["sum1", "sum2"]
    # restore() brings the corrected text back (the tombstone stays in the history)
    records = {r.id: r for r in store.get_summaries("alice", statuses=None)}
    reactivate, retire = plan_restore(again.id, records)
    assert reactivate.summary_id == again.id and retire is None
    assert editor.get("sum2", "bob").summary.text == "bob fact 2"  # bob untouched


def test_get_all_pages_with_an_opaque_cursor(editor: Editor) -> None:
    first = editor.get_all("alice", limit=2)
    assert [r.id for r in first.items] == ["sum0", "sum1"] and first.next_cursor
    second = editor.get_all("alice", limit=2, cursor_text=first.next_cursor)
    assert [r.id for r in second.items] == ["sum2"] and second.next_cursor is None
    turns = editor.get_all("alice", level="turn", limit=3)
    assert [t.id for t in turns.items] == ["t0", "t1", "t2"]
    rest = editor.get_all("alice", level="turn", limit=3, cursor_text=turns.next_cursor)
    assert [t.id for t in rest.items] == ["t3"]
    assert editor.get_all("alice", level="turn", status="pending").items[0].id == "t3"
    with pytest.raises(UserInputError, match="listing level 'summary'"):
        editor.get_all("alice", level="turn", cursor_text=first.next_cursor)


@pytest.mark.parametrize(
    "bad",
    ["", "abc", "!!!", "x" * 5000, cursor.PageCursors().encode("summary", "alice", (5, "x")), EVIL],
    ids=["empty", "abc", "punctuation", "long", "signed-bad-value", "evil"],  # one key a process
)
def test_a_forged_cursor_is_a_user_input_error(editor: Editor, bad: str) -> None:
    with pytest.raises(UserInputError):
        editor.get_all("alice", cursor_text=bad)


@pytest.mark.parametrize(
    ("level", "status", "limit"),
    [
        ("fact", None, 10),
        ("summary", "pending", 10),
        ("segment", "active", 10),
        ("turn", "deleted", 10),
        ("summary", None, 0),
        ("summary", None, 1001),
        ("summary", None, True),
        ("summary", None, "10"),
    ],
)
def test_listing_arguments_are_checked(level: str, status: str | None, limit: object) -> None:
    with pytest.raises(UserInputError):
        check_listing(level, status, limit)


def test_corrections_are_refused_on_a_read_only_store(store: InMemoryStore) -> None:
    view = store.read_only_view()
    reader = Editor(view, HashingEmbedder(64), guard=WriteGuard(view), clock=lambda: NOW)
    with pytest.raises(ReadOnlyStoreError):
        reader.update("sum0", "x", "alice")
    with pytest.raises(ReadOnlyStoreError):
        reader.delete("sum0", "alice")
    assert reader.get("sum0", "alice").summary.status is SummaryStatus.ACTIVE
