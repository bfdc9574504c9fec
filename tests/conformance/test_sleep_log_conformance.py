"""The sleep journal's lines (`Storage.sleep_log()`), the same on every kind of store: a folder's
fsync'd file, an object store's table, the in-memory twin's list.
"""

from __future__ import annotations

from hymem.testing import SleepLogTests


class TestSleepLog(SleepLogTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""
