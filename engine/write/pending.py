"""The writer's in-process view of each user's pending turns and next sequence number.

The store stays the truth: the view is loaded from it on first use, extended with exactly the
turns an `append_turns` call inserted, trimmed by exactly the turns a commit stored, and dropped
whenever a write raised, so the next call reloads it. Holding it saves the two LanceDB scans
(all pending turns, all sequence numbers) that every `add()` paid before, which dominated the
cost of one-turn adds once the user's history grew. It is only valid in the process that holds
the store's writer lock, which is the only process that changes turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from hymem.core.errors import UserInputError
from hymem.core.metadata import canonical
from hymem.core.types import TurnRecord, TurnStatus
from hymem.indexes.ports import Turns
from hymem.write.buffer import Unplanned
from hymem.write.messages import NormalisedMessage


class PendingTurns:
    """Per user: pending turns in sequence order, and the next free sequence number."""

    def __init__(self, store: Turns) -> None:
        self._store = store
        self._turns: dict[str, list[TurnRecord]] = {}
        self._next_seq: dict[str, int] = {}
        self._last_call: dict[str, list[TurnRecord]] = {}  # the turns the last add() inserted
        self._unplanned: dict[str, Unplanned] = {}  # where a plan last stored nothing

    def turns(self, user_id: str) -> list[TurnRecord]:
        """The user's pending turns, oldest first (a copy)."""
        if user_id not in self._turns:
            self._turns[user_id] = self._store.get_turns(user_id, status=TurnStatus.PENDING)
        return list(self._turns[user_id])

    def next_seq(self, user_id: str) -> int:
        if user_id not in self._next_seq:
            self._next_seq[user_id] = self._store.next_seq(user_id)
        return self._next_seq[user_id]

    def appended(
        self, user_id: str, offered: Sequence[TurnRecord], inserted: Iterable[str]
    ) -> None:
        """Record the outcome of one `append_turns(offered)` that inserted `inserted` ids."""
        new = set(inserted)
        fresh = [t for t in offered if t.id in new]
        if fresh:
            self._last_call[user_id] = fresh
            self._next_seq[user_id] = max(self.next_seq(user_id), *(t.seq + 1 for t in fresh))
        if user_id in self._turns:
            self._turns[user_id].extend(fresh)
            self._turns[user_id].sort(key=lambda t: (t.seq, t.id))

    def last_call(self, user_id: str) -> list[TurnRecord]:
        """The turns the user's most recent appending add() inserted, as far as this process
        knows: remembered since that call, else (after a restart) the newest pending turns
        accepted together (one call's turns share their `created_at`)."""
        if user_id in self._last_call:
            return list(self._last_call[user_id])
        pending = self.turns(user_id)
        if not pending:
            return []
        newest = pending[-1].created_at
        tail = [t for t in pending if t.created_at == newest]
        return tail

    def unplanned(self, user_id: str) -> Unplanned | None:
        """Where the user's last plan stored nothing (`buffer.plan_due`), if it did."""
        return self._unplanned.get(user_id)

    def planned(self, user_id: str, *, stored_any: bool) -> None:
        """Record a plan's outcome: nothing stored marks where to wait from; a commit clears it."""
        pending = self._turns.get(user_id)
        if stored_any or not pending:
            self._unplanned.pop(user_id, None)
        else:
            self._unplanned[user_id] = Unplanned(len(pending), pending[-1].session_id)

    def stored(self, user_id: str, turn_ids: Iterable[str]) -> None:
        """Drop turns a commit marked stored."""
        done = set(turn_ids)
        if user_id in self._turns:
            self._turns[user_id] = [t for t in self._turns[user_id] if t.id not in done]

    def forget(self, user_id: str) -> None:
        """After a failed write: reload from the store next time."""
        self._turns.pop(user_id, None)
        self._next_seq.pop(user_id, None)  # the last call is kept: a retry must still match it
        self._unplanned.pop(user_id, None)

    def drop_user(self, user_id: str) -> None:
        """After the user's turns were erased or imported underneath: forget everything,
        the last call included (a repeat of it is new, not a retry of erased turns)."""
        self.forget(user_id)
        self._last_call.pop(user_id, None)

    def clear(self) -> None:
        self._turns.clear()
        self._next_seq.clear()
        self._last_call.clear()
        self._unplanned.clear()


def repeats_last_call(
    last: list[TurnRecord],
    session_id: str,
    accepted: Sequence[NormalisedMessage],
    now: datetime,
    window_s: float,
    metadata: Mapping[str, object] | None = None,
) -> list[TurnRecord] | None:
    """The previous call's turns when this call repeats it, for a caller that names neither
    its messages nor its request (see docs/errors.md, "Retrying add()"): no message has an id, the
    same session, metadata, speakers and texts in the same order, and the previous call was
    accepted less than `window_s` ago (0, the default, turns this off: equal text alone cannot
    tell a retry from a user who said the same thing again). None: a new call."""
    if window_s <= 0 or not last or any(m.id is not None for m in accepted):
        return None
    if len(last) != len(accepted):
        return None
    meta = canonical(metadata or {})  # typed: {"k": 1} is not {"k": True}
    same = all(
        (t.session_id, t.speaker, t.text, canonical(t.metadata))
        == (session_id, m.speaker, m.text, meta)
        for t, m in zip(last, accepted, strict=True)
    )
    age = (now - last[0].created_at).total_seconds()
    return last if same and age <= window_s else None


def repeats_request(
    request_id: str,
    ids: Sequence[str],
    earlier: Sequence[TurnRecord],
    session_id: str,
    accepted: Sequence[NormalisedMessage],
    metadata: Mapping[str, object] | None = None,
) -> bool:
    """True when this call is an earlier add() with the same `request_id` sent again; False
    when the request is new. `ids`: each message's turn id (`records.call_turn_ids`);
    `earlier`: the stored turns among the ids the request made (messages without their own).
    A request id names one call's messages: a call that reuses it with other messages (another
    session, metadata, speaker or text at any position, or more messages) is refused rather
    than taken as a retry, which would drop what it says."""
    if not earlier:
        return False
    by_id = {t.id: t for t in earlier}
    meta = canonical(metadata or {})
    made = [(i, m) for i, m in zip(ids, accepted, strict=True) if m.id is None]
    same = len(by_id) == len(made) and all(
        i in by_id
        and (by_id[i].session_id, by_id[i].speaker, by_id[i].text)
        == (session_id, m.speaker, m.text)
        and canonical(by_id[i].metadata) == meta
        for i, m in made
    )
    if not same:
        raise UserInputError(
            f"request_id {request_id!r} was already used by an add() with other messages"
            " (session, speakers, texts or metadata differ): a request id names one add()"
            " call, so give new messages a new one"
        )
    return True


__all__ = ["PendingTurns", "repeats_last_call", "repeats_request"]
