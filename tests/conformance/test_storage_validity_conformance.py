"""Issue 30 on every `Storage`: memory ids and fact keys as read keys, validity in time as a
search filter (`RowScope.valid_at` / `RowScope.admits`), and the batched dense search that
write-time consolidation uses. Runs once per store kit, like the rest of the conformance suite.
"""

from __future__ import annotations

from hymem.testing import ValidityTests


class TestValidity(ValidityTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""
