"""A folder's commit journal: one `journal.json` for its single writer, present only while a
multi-table write is in flight (`store/commits.py` writes it, `store/recovery.py` settles it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hymem.core.errors import StoreCorruptedError
from hymem.indexes.jsonfile import read_json, write_json_atomic
from hymem.indexes.store.journals import UNREADABLE_OP

JOURNAL_FILE = "journal.json"


class Journal:
    """`journal.json`: present only while a multi-table write is in flight."""

    def __init__(self, folder: Path) -> None:
        self.file = folder / JOURNAL_FILE

    def begin(self, entry: dict[str, Any]) -> None:
        write_json_atomic(self.file, entry)

    def pending(self) -> dict[str, Any] | None:
        """The write in flight, or None. A journal that cannot be read is still a write in
        flight, of unknown content: `{"op": UNREADABLE_OP, "error": why}`."""
        try:
            return read_json(self.file)
        except StoreCorruptedError as exc:
            return {"op": UNREADABLE_OP, "error": str(exc)}

    def clear(self) -> None:
        self.file.unlink(missing_ok=True)


class FolderJournals:
    """One `journal.json` for the folder's single writer."""

    shared = True

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def of(self, user_id: str | None) -> Journal:
        return self.journal


__all__ = ["JOURNAL_FILE", "FolderJournals", "Journal"]
