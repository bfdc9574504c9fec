"""Group commit: calls arriving while a commit is in flight share the next commit."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
from hymem.indexes.store.group_commit import GroupCommit


class _Gate:
    """A commit function that holds its first commit until released, and records batches."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self._fail_on = fail_on

    def __call__(self, items: Sequence[str]) -> list[str]:
        self.batches.append(list(items))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.release.wait(10)
        if self._fail_on in items:
            raise OSError(f"commit of {items} failed")
        return [i.upper() for i in items]


def _run(group: GroupCommit[str, str], item: str, out: dict[str, object]) -> None:
    try:
        out[item] = group.submit(item)
    except OSError as exc:
        out[item] = exc


def _while_first_in_flight(gate: _Gate, later: list[str]) -> dict[str, object]:
    group: GroupCommit[str, str] = GroupCommit(gate)
    out: dict[str, object] = {}
    first = threading.Thread(target=_run, args=(group, "a", out))
    first.start()
    assert gate.entered.wait(10)
    threads = [threading.Thread(target=_run, args=(group, i, out)) for i in later]
    for t in threads:
        t.start()
    while len(group._queue) < len(later):  # every later call has queued
        threading.Event().wait(0.01)
    gate.release.set()
    for t in [first, *threads]:
        t.join(10)
    return out


def test_a_caller_alone_commits_at_once() -> None:
    gate = _Gate()
    gate.release.set()
    group: GroupCommit[str, str] = GroupCommit(gate)
    assert group.submit("a") == "A"
    assert group.submit("b") == "B"
    assert gate.batches == [["a"], ["b"]]


def test_calls_queued_during_a_commit_share_the_next_one() -> None:
    gate = _Gate()
    out = _while_first_in_flight(gate, ["b", "c", "d"])
    assert out == {"a": "A", "b": "B", "c": "C", "d": "D"}  # each caller gets its own result
    assert gate.batches[0] == ["a"]
    assert sorted(gate.batches[1]) == ["b", "c", "d"] and len(gate.batches) == 2


def test_a_failed_commit_fails_its_own_callers_only() -> None:
    gate = _Gate(fail_on="c")
    out = _while_first_in_flight(gate, ["b", "c"])
    assert out["a"] == "A"
    assert isinstance(out["b"], OSError) and out["b"] is out["c"]  # one commit, one outcome


def test_a_commit_returning_the_wrong_count_is_an_error() -> None:
    group: GroupCommit[str, str] = GroupCommit(lambda items: [])
    with pytest.raises(RuntimeError, match="returned 0 of 1"):
        group.submit("a")
