"""An object store's commit journals: one object per user, written whole by the writer holding
that user's lease (`leases.py`); a writer that dies mid-commit leaves it for the next writer of
the user to settle (`store/recovery.py`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hymem.indexes.objects.objects import Objects
from hymem.indexes.store.journals import UNREADABLE_OP

JOURNAL_PREFIX = "_hymem/journal/"


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


__all__ = ["JOURNAL_PREFIX", "ObjectJournal", "ObjectJournals", "user_key"]
