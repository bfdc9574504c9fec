"""Embedders: the protocol, MiniLM (sentence-transformers) and the hashing twin."""
