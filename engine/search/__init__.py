"""Retrieval over a store's search ports (`DenseSearch`, `LexicalSearch`): hybrid search
(dense + lexical fused by reciprocal rank) and the search scope every caller builds once at
the edge."""
