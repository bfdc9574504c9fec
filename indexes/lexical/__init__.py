"""Tantivy, the derived lexical index: the analyzer, documents and queries, the record of what
it was synced with, and the per-worker replica caught up from LanceDB."""
