"""The in-memory twin of the store (dicts and numpy, Tantivy's BM25 formula in Python): the same
protocol and conformance suite as the persistent store, for fast tests."""
