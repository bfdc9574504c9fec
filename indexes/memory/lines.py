"""The in-memory twin of a store's `LineLog` (the sleep journal's lines)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence


class MemoryLines:
    """Lines per user in a list: what `FileLines` and `TableLines` keep, without the I/O."""

    def __init__(self) -> None:
        self._rows: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def lines(self, user_id: str | None = None) -> list[str]:
        with self._lock:
            return [line for u, line in self._rows if user_id is None or u == user_id]

    def append(self, rows: Sequence[tuple[str, str]]) -> None:
        for _, line in rows:
            json.loads(line)  # the same contract as the persistent logs: one JSON entry a line
        with self._lock:
            self._rows.extend(rows)

    def delete_user(self, user_id: str) -> None:
        with self._lock:
            self._rows = [(u, line) for u, line in self._rows if u != user_id]

    def close(self) -> None:
        """Nothing is held open."""


__all__ = ["MemoryLines"]
