"""One behavioural suite for every `Storage`: lifecycle, turns, commits, reads, history, traces.

Each test runs once per implementation (`storage_kit`: the LanceDB + Tantivy `Store` and
`InMemoryStore`), so a promise of the protocol is tested once, and a component tested against
the in-memory store may rely on the real one behaving the same. Search lives in
`test_storage_search_conformance.py`.
"""

from __future__ import annotations

from hymem.testing import StorageTests


class TestStorage(StorageTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""
