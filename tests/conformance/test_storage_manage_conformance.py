"""The management primitives of every `Storage`: keyset paging (`page`) and erasure
(`erase_user`), run once per implementation like the rest of the conformance suite.
"""

from __future__ import annotations

from hymem.testing import ManageTests


class TestManage(ManageTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""
