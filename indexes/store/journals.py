"""Where a journaled multi-table write records its intent (`commits.CommitWriter`).

A local folder has one writer process, so one `journal.json` serves every user
(`FolderJournals`). An object store has many writers, one per user at a time (`leases.py`), so
each user has a journal object of its own (`ObjectJournals`): a writer that dies mid-commit
leaves it behind, and the next writer of that user settles it after taking the user's lease,
exactly as a local open settles `journal.json`. Nobody settles another user's journal: its
writer may be alive.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from hymem.indexes.objects.objects import Objects
from hymem.indexes.store.commits import UNREADABLE_OP, Journal

JOURNAL_PREFIX = "_hymem/journal/"


class JournalLike(Protocol):
    """The record of one write in flight: begun, read back after a crash, cleared when done."""

    @property
    def file(self) -> object: ...  # where it lives, for messages

    def begin(self, entry: dict[str, Any]) -> None: ...

    def pending(self) -> dict[str, Any] | None: ...

    def clear(self) -> None: ...


class Journals(Protocol):
    """The journal a write for `user_id` uses; `shared` when one journal serves everyone."""

    shared: bool

    def of(self, user_id: str | None) -> JournalLike: ...


class FolderJournals:
    """One `journal.json` for the folder's single writer."""

    shared = True

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def of(self, user_id: str | None) -> Journal:
        return self.journal


def user_key(prefix: str, user_id: str, suffix: str = ".json") -> str:
    """An object key for a user: hashed, as user ids may hold any character."""
    return f"{prefix}{hashlib.sha256(user_id.encode('utf-8')).hexdigest()[:40]}{suffix}"


class ObjectJournal:
    """One user's journal as an object (written whole; the writer holds the user's lease)."""

    def __init__(self, objects: Objects, key: str) -> None:
        self._objects = objects
        self.file = key

    def begin(self, entry: dict[str, Any]) -> None:
        self._objects.put(self.file, json.dumps(entry, default=str).encode("utf-8"))

    def pending(self) -> dict[str, Any] | None:
        found = self._objects.get(self.file)
        if found is None:
            return None
        try:
            data = json.loads(found.data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return {"op": UNREADABLE_OP, "error": f"cannot read {self.file}: {exc}"}
        if not isinstance(data, dict):
            return {"op": UNREADABLE_OP, "error": f"{self.file} does not hold a JSON object"}
        return data

    def clear(self) -> None:
        self._objects.delete(self.file)


class ObjectJournals:
    shared = False

    def __init__(self, objects: Objects) -> None:
        self._objects = objects

    def of(self, user_id: str | None) -> ObjectJournal:
        if user_id is None:
            raise ValueError("an object store journals per user")
        return ObjectJournal(self._objects, user_key(JOURNAL_PREFIX, user_id))


__all__ = [
    "FolderJournals",
    "JournalLike",
    "Journals",
    "ObjectJournal",
    "ObjectJournals",
    "user_key",
]
