"""A flush's turns made ready for the summariser: their texts as it will read them (compressed
when a compressor is set), token counts, vectors, and the topic segments cut from them.

Each of those is worked out once per turn and cached by (user_id, turn id) until the turn is
committed or its user dropped: an add whose buffer is not yet full would otherwise count,
compress and embed the same pending turns again on every later add."""

from __future__ import annotations

import numpy as np
from hymem.core.config import MemoryConfig
from hymem.core.types import TurnRecord
from hymem.llm.tokens import count_tokens_many
from hymem.write.compression import LLMLinguaCompressor, attention_boundaries, load_compressor
from hymem.write.parts import Prepared
from hymem.write.pooling import cached_values
from hymem.write.records import segment_line, segment_scope
from hymem.write.segmentation import Span, adjacent_similarities, plan_segments
from hymem.write.summary_vectors import SummaryVectors

Key = tuple[str, str]  # (user_id, turn id): turn ids are only unique per user


class BufferPrep:
    """The per-turn work of a flush before its summariser call, cached. The caller (the
    `Ingestor`) serialises use; the compressor resolves on first use."""

    def __init__(self, config: MemoryConfig, summary_vectors: SummaryVectors) -> None:
        self._config = config
        self._summary_vectors = summary_vectors
        self._compressor: LLMLinguaCompressor | None = None
        self._compressor_resolved = False
        self._vectors: dict[Key, np.ndarray] = {}
        self._compressed: dict[Key, str] = {}
        self._tokens: dict[Key, int] = {}

    def compressor(self) -> LLMLinguaCompressor | None:
        """The configured compressor, resolved on first use (its model loads later still)."""
        if not self._compressor_resolved:
            self._compressor = load_compressor(self._config)
            self._compressor_resolved = True
        return self._compressor

    def texts(self, pending: list[TurnRecord]) -> list[str]:
        """Turn texts as the summariser will see them: compressed when a compressor is set."""
        compressor = self.compressor()
        if compressor is None:
            return [t.text for t in pending]
        by_key = {(t.user_id, t.id): t for t in pending}
        return cached_values(
            self._compressed,
            list(by_key),
            lambda ks: compressor.compress([by_key[k].text for k in ks]),
            self._config.ingest_cache_items,
        )

    def token_counts(self, pending: list[TurnRecord], texts: list[str]) -> list[int]:
        turns = {(t.user_id, t.id): (t, text) for t, text in zip(pending, texts, strict=True)}

        def count(ks: list[Key]) -> list[int]:
            return count_tokens_many([f"{turns[k][0].speaker}: {turns[k][1]}" for k in ks])

        return cached_values(self._tokens, list(turns), count, self._config.ingest_cache_items)

    def prepare(self, pending: list[TurnRecord], texts: list[str], tokens: list[int]) -> Prepared:
        by_key = {(t.user_id, t.id): t for t in pending}

        def embed(ks: list[Key]) -> np.ndarray:
            return self._summary_vectors.embed_turns(ks, [by_key[k].text for k in ks])

        vectors = cached_values(self._vectors, list(by_key), embed, self._config.ingest_cache_items)
        lines = [segment_line(t, text) for t, text in zip(pending, texts, strict=True)]
        return Prepared(texts=texts, lines=lines, tokens=tokens, vectors=np.stack(vectors))

    def segment(self, pending: list[TurnRecord], prepared: Prepared) -> list[Span]:
        cfg = self._config
        attention = attention_boundaries(self.compressor(), prepared.texts)
        return plan_segments(
            sims=adjacent_similarities(prepared.vectors),
            session_ids=[segment_scope(t) for t in pending],
            token_counts=prepared.tokens,
            tau=cfg.segment_tau,
            max_turns=cfg.segment_max_turns,
            max_tokens=cfg.buffer_tokens,
            overlap=cfg.segment_overlap_turns,
            attention=attention,
        )

    def drop(self, keys: list[Key]) -> None:
        """Forget the vectors, compressed texts and token counts of these turns."""
        for key in keys:
            self._vectors.pop(key, None)
            self._tokens.pop(key, None)
            self._compressed.pop(key, None)
        self._summary_vectors.forget(keys)

    def drop_user(self, user_id: str) -> None:
        self.drop([k for k in (*self._vectors, *self._tokens) if k[0] == user_id])

    def close(self) -> None:
        if self._compressor is not None:
            self._compressor.close()
        for cache in (self._vectors, self._compressed, self._tokens):
            cache.clear()
        self._summary_vectors.clear()


__all__ = ["BufferPrep"]
