"""Turn and summary vectors for the write path, each text through the model at most once.

Turns are embedded when their buffer may flush; with a `TokenEmbedder` the same pass keeps each
turn's token vectors until its summaries are committed, and a summary whose source sentence is
found in its turn gets a vector pooled from them (`hymem.write.spans` says why and what it
costs in recall). Every other summary is embedded as text, in one batch per commit, each
distinct text once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hymem.core.types import SummaryRecord
from hymem.embed.embedders import Embedder, TokenEmbedder, TokenVectors
from hymem.write.spans import added_words, locate, pooled_summary_vector

# Token vectors are ~100 KB per long turn (float16): they are kept only for pending turns, and
# dropped whole past this many (a summary then falls back to embedding its text).
TOKEN_CACHE_ITEMS = 2048
PHRASE_CACHE_ITEMS = 4096  # added words ("Caroline", "7 May 2023") recur across summaries

TurnKey = tuple[str, str]  # (user_id, turn id)


@dataclass(frozen=True, slots=True)
class SummarySource:
    """A summary's turn and the verbatim sentence it was made from."""

    turn: TurnKey
    turn_text: str
    sentence: str


class SummaryVectors:
    """Owns the token-vector cache of one writer. Not thread-safe: the Ingestor's lock guards."""

    def __init__(self, embedder: Embedder, *, pool: bool = True) -> None:
        self._embedder = embedder
        self._pool = pool
        self._tokens: dict[TurnKey, TokenVectors] = {}
        self._phrases: dict[str, TokenVectors] = {}
        self.pooled = 0  # summaries given a pooled vector, since this writer opened
        self.embedded = 0  # summaries embedded as text

    @property
    def pools(self) -> bool:
        return self._pool and isinstance(self._embedder, TokenEmbedder)

    def embed_turns(self, keys: Sequence[TurnKey], texts: Sequence[str]) -> np.ndarray:
        """Turn vectors; their token vectors are kept for pooling when the embedder has them."""
        if not self.pools or not isinstance(self._embedder, TokenEmbedder):
            return self._embedder.embed(list(texts))
        vectors, tokens = self._embedder.embed_with_tokens(list(texts))
        if len(self._tokens) + len(keys) > TOKEN_CACHE_ITEMS:
            self._tokens.clear()
        self._tokens.update(zip(keys, tokens, strict=True))
        return vectors

    def forget(self, keys: Sequence[TurnKey]) -> None:
        for key in keys:
            self._tokens.pop(key, None)

    def clear(self) -> None:
        self._tokens.clear()
        self._phrases.clear()

    def assign(self, summaries: Sequence[SummaryRecord], sources: dict[str, SummarySource]) -> int:
        """Set `vector` on every summary: pooled where its source allows, else embedded.
        Returns how many were pooled."""
        pooled: dict[str, np.ndarray] = {}
        if self.pools:
            pooled = self._pooled(summaries, sources)
        rest = [r for r in summaries if r.id not in pooled]
        unique = list(dict.fromkeys(r.text for r in rest))
        embedded = dict(zip(unique, self._embedder.embed(unique), strict=True)) if unique else {}
        for rec in summaries:
            vec = pooled[rec.id] if rec.id in pooled else embedded[rec.text]
            rec.vector = [float(x) for x in vec]
        self.pooled += len(pooled)
        self.embedded += len(rest)
        return len(pooled)

    def _pooled(
        self, summaries: Sequence[SummaryRecord], sources: dict[str, SummarySource]
    ) -> dict[str, np.ndarray]:
        plans: list[tuple[str, TokenVectors, tuple[int, int], str]] = []
        for rec in summaries:
            src = sources.get(rec.id)
            tokens = self._tokens.get(src.turn) if src is not None else None
            span = locate(src.turn_text, src.sentence) if src is not None else None
            if src is not None and tokens is not None and span is not None:
                plans.append((rec.id, tokens, span, added_words(rec.text, src.sentence)))
        self._remember_phrases([phrase for *_, phrase in plans if phrase])
        out: dict[str, np.ndarray] = {}
        for rec_id, tokens, span, phrase in plans:
            vec = pooled_summary_vector(tokens, span, self._phrases.get(phrase))
            if vec is not None:
                out[rec_id] = vec
        return out

    def _remember_phrases(self, phrases: list[str]) -> None:
        missing = list(dict.fromkeys(p for p in phrases if p not in self._phrases))
        if not missing:
            return
        assert isinstance(self._embedder, TokenEmbedder)
        _, tokens = self._embedder.embed_with_tokens(missing)
        if len(self._phrases) + len(missing) > PHRASE_CACHE_ITEMS:
            self._phrases.clear()
        self._phrases.update(zip(missing, tokens, strict=True))


__all__ = ["SummarySource", "SummaryVectors"]
