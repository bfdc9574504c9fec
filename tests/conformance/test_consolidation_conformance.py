"""Write-time consolidation's promises, the same on every kind of store: a repeat merged from
another segment leaves a memory that still leads to the raw text of every turn it rests on
(`get()` shows each segment), and a twin in another scope (agent, run, metadata) is never
merged into, nor ended by, its twin. The real write path (`Ingestor`, extractive summariser,
hashing embedder) and the real `get()` (`Editor`) over each `Storage` the suite opens.
"""

from __future__ import annotations

from hymem.testing import ConsolidationTests


class TestConsolidation(ConsolidationTests):
    """Every test once per store kind (`storage_kit`, tests/fixtures_store.py)."""
