"""An outage at any step of a flush's commit (issue #27 case 5): the store stops answering at
the k-th LanceDB call of the commit and stays down through the rollback the failure attempts;
once it is back, the writer goes on. Each turn ends in exactly one segment, no summary is active
twice. Faults are injected into LanceDB calls on a local store, which takes the same commit and
recovery path as an object store (its journal is a file, the rest is the same)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import StoreUnavailableError
from hymem.core.types import SummaryStatus, TurnStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.lance.tables import LanceTables
from hymem.testing import store_of

pytestmark = pytest.mark.integration

CALLS = ("add", "delete", "upsert", "rows", "count", "query")


class Outage:
    """Counts LanceDB calls once armed; from the k-th on, calls fail: `length` of them (the
    store comes back by itself, e.g. in the middle of the rollback), or all until healed."""

    def __init__(self) -> None:
        self.left: int | None = None
        self.length: int | None = None
        self.down = False

    def arm(self, k: int, length: int | None) -> None:
        self.left, self.length, self.down = k, length, False

    def heal(self) -> None:
        self.left, self.down = None, False

    def check(self) -> None:
        if self.left is not None and not self.down:
            if self.left <= 0:
                self.down = True
            self.left -= 1
        if self.down and self.length is not None:
            self.length -= 1
            if self.length < 0:
                self.heal()
        if self.down:
            raise StoreUnavailableError("the object store stopped answering (test)")


@pytest.fixture
def outage(monkeypatch: pytest.MonkeyPatch) -> Outage:
    state = Outage()
    for name in CALLS:
        original = getattr(LanceTables, name)

        def wrapped(
            self: LanceTables, *a: Any, _f: Callable[..., Any] = original, **kw: Any
        ) -> Any:
            state.check()
            return _f(self, *a, **kw)

        monkeypatch.setattr(LanceTables, name, wrapped)
    return state


def _problems(mem: Memory, user: str) -> list[str]:
    found: list[str] = []
    segments = {s["id"]: s for s in store_of(mem).tables.rows("segments", f"user_id = '{user}'")}
    turns = store_of(mem).get_turns(user)
    owned = {t.segment_id for t in turns if t.status == TurnStatus.STORED}
    for turn in turns:
        seg = segments.get(turn.segment_id or "")
        if turn.status == TurnStatus.STORED and (seg is None or turn.id not in seg["turn_ids"]):
            found.append(f"stored turn {turn.id} points at {turn.segment_id}, not live")
        if turn.status == TurnStatus.PENDING:
            found.append(f"turn {turn.id} pending after a good flush")
    for seg_id in segments:
        if seg_id not in owned:
            found.append(f"segment {seg_id} owns none of its turns")
    texts = [s.text for s in store_of(mem).get_summaries(user)]
    found += [f"summary {t!r} active twice" for t in set(texts) if texts.count(t) > 1]
    return found


@pytest.mark.parametrize("length", [None, 1, 2, 4])
def test_an_outage_at_any_step_of_a_commit_duplicates_nothing(
    tmp_path: Path, outage: Outage, length: int | None
) -> None:
    cfg = MemoryConfig.defaults(llm="extractive")
    found: list[str] = []
    with Memory(tmp_path / "m", embedder=HashingEmbedder(64), config=cfg) as mem:
        for k in range(0, 36):
            user = f"u{k}"
            for i in range(6):
                mem.add(f"{user} rowed the red boat on lake {i} at dawn.", user_id=user)
            outage.arm(k, length)
            with contextlib.suppress(StoreUnavailableError):
                mem.flush(user_id=user)
            outage.heal()
            for i in range(6, 9):
                mem.add(f"{user} hiked the grey hill {i} at noon.", user_id=user)
            mem.flush(user_id=user)
            found += [f"k={k}: {p}" for p in _problems(mem, user)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("length", [None, 2])
def test_an_outage_in_a_commit_carrying_a_supersession_loses_no_value(
    tmp_path: Path, outage: Outage, length: int | None
) -> None:
    """Issue 30's fold: the flush that says the new value also ends the old one, in one
    commit. An outage at any of its steps never leaves no value served; once the next write
    has settled the failed commit (an outage that lasts through the rollback defers it to
    then, as for any commit), exactly the new value is active and the old one ended once."""
    cfg = MemoryConfig.defaults(llm="extractive")
    found: list[str] = []

    def living(mem: Memory, user: str) -> list[str]:
        return [s.text for s in store_of(mem).get_summaries(user) if " live" in s.text]

    with Memory(tmp_path / "m", embedder=HashingEmbedder(64), config=cfg) as mem:
        for k in range(0, 24):
            user = f"u{k}"
            mem.add("I live in Lisbon.", user_id=user, timestamp="2024-01-01T10:00:00")
            mem.flush(user_id=user)
            mem.add("I live in Porto now.", user_id=user, timestamp="2024-03-01T10:00:00")
            outage.arm(k, length)
            with contextlib.suppress(StoreUnavailableError):
                mem.flush(user_id=user)
            outage.heal()
            if not living(mem, user):
                found.append(f"k={k}: after the outage, no value active")
            mem.flush(user_id=user)
            now = living(mem, user)
            ended = [
                s.text
                for s in store_of(mem).get_summaries(user, statuses=[SummaryStatus.SUPERSEDED])
                if " live" in s.text
            ]
            if len(now) != 1 or "Porto" not in now[0] or len(ended) != 1:
                found.append(f"k={k}: after the next flush, active {now}, ended {ended}")
            found += [f"k={k}: {p}" for p in _problems(mem, user)]
    assert not found, "\n".join(found)
