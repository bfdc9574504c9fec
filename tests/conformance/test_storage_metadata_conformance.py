"""Metadata filters behave alike in every `Storage` (the in-memory twin, the LanceDB + Tantivy
store with its dense cache, and with every dense query sent to LanceDB's SQL), in the dense,
lexical and hybrid branches, at both levels and through a read-only handle: each returns
exactly the records `Filter.matches`, the reference evaluator, accepts. Hostile keys and values
are literals that match only themselves.
"""

from __future__ import annotations

from hymem.testing import MetadataTests


class TestMetadata(MetadataTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""
