"""Hybrid retrieval: dense (LanceDB cosine) + BM25 (Tantivy) fused by reciprocal rank.

CONTRACT (filled in by the foundation work):
    SearchMode = Literal["hybrid", "dense", "lexical"]
    HybridSearcher(store, embedder, rrf_k=60)
        .search(query, *, user_id, k, level=Level.SUMMARY, mode="hybrid", time_range=None,
                include_inactive=False) -> list[Hit]
        .search_vector(vector, query, ...)  # same with a precomputed query vector
    Each branch fetches a deeper candidate list (e.g. max(2k, 20)) before fusion; hits carry
    dense/lexical scores and ranks and the fused score; text/time/segment_id come from LanceDB.
"""

from typing import Literal

SearchMode = Literal["hybrid", "dense", "lexical"]
