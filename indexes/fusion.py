"""Reciprocal-rank fusion (pure). CONTRACT: reciprocal_rank_fusion(rankings: Sequence[Sequence[str]],
k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[str, float]] best first,
ties broken by best single rank then id, deterministic."""
