"""`Turns`: the write-ahead log of accepted messages, what the write path reads and appends."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol, runtime_checkable

from hymem.core.types import TurnRecord, TurnStatus


@runtime_checkable
class Turns(Protocol):
    """Every turn a user sent, durable before any model runs."""

    def get_turns(
        self, user_id: str, *, ids: Sequence[str] | None = None, status: TurnStatus | None = None
    ) -> list[TurnRecord]:
        """The user's turns, optionally only `ids` and/or one status, ordered by (seq, id)."""
        ...

    def next_seq(self, user_id: str) -> int:
        """One past the user's highest turn seq; 0 for a user with no turns."""
        ...

    def append_turns(
        self, turns: Sequence[TurnRecord], *, fresh_ids: Collection[str] = ()
    ) -> list[str]:
        """Insert turns whose (user_id, id) is new, in one write; already-stored ones (and
        repeats within the call: the first wins) are skipped unchanged. Returns the ids
        actually inserted, so a retried add is idempotent. `fresh_ids` are ids the caller
        made for this call and knows to be unused (they embed a new sequence number): a store
        may skip looking them up, which is most of a one-turn add's cost."""
        ...


__all__ = ["Turns"]
