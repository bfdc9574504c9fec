"""Where a journaled multi-table write records its intent (`commits.CommitWriter`), as two small
Protocols.

A local folder has one writer process, so one `journal.json` serves every user
(`folder/journal.py`). An object store has many writers, one per user at a time, so each user
has a journal object of its own (`objects/journals.py`): a writer that dies mid-commit leaves it
behind, and the next writer of that user settles it after taking the user's lease, exactly as a
local open settles `journal.json`. Nobody settles another user's journal: its writer may be
alive.
"""

from __future__ import annotations

from typing import Any, Protocol

# The op `JournalLike.pending` reports for a journal it cannot read: a write of unknown content.
UNREADABLE_OP = "unreadable"


class JournalLike(Protocol):
    """The record of one write in flight: begun, read back after a crash, cleared when done."""

    @property
    def file(self) -> object: ...  # where it lives, for messages

    def begin(self, entry: dict[str, Any]) -> None: ...

    def pending(self) -> dict[str, Any] | None: ...

    def clear(self) -> None: ...


class Journals(Protocol):
    """The journal a write for `user_id` uses; `shared` when one journal serves everyone."""

    @property
    def shared(self) -> bool: ...

    def of(self, user_id: str | None) -> JournalLike: ...


__all__ = ["UNREADABLE_OP", "JournalLike", "Journals"]
