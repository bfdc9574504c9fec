"""Retrieval doubles: a constant embedder, a searcher that serves planted hits (as ids and rows
too, for the light path's id ranking), and a word-level token embedder."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from hymem.core.types import Hit, Level, SummaryStatus
from hymem.embed.embedders import HashingEmbedder, TokenVectors
from hymem.search.hybrid import Ranked
from hymem.search.scope import SearchScope

DIM = 4  # FakeEmbedder's dimension


class FakeEmbedder:
    """A constant embedder of dimension 4; records every batch it embedded."""

    name, dim = "fake-4", DIM

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.ones((len(texts), self.dim), dtype=np.float32) / 2.0


class FakeSearcher:
    """Returns the first k of `hits` at the level asked (all of one user unless a test plants
    others); records each query, level and time range."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.queries: list[tuple[str, int]] = []
        self.levels: list[Level] = []
        self.time_ranges: list[Any] = []

    def find(self, query: str, scope: SearchScope, vector: Any = None) -> list[Hit]:
        assert vector is not None
        self.queries.append((query, scope.k))
        self.levels.append(scope.level)
        self.time_ranges.append(scope.time_range)
        return [h for h in self.hits if h.level == scope.level][: scope.k]

    def rank(
        self,
        query: str,
        scope: SearchScope,
        vector: Any,
        *,
        also: Sequence[Any] = (),
        also_k: int = 0,
    ) -> Ranked:
        """`find`'s first hits as a ranking of ids (every branch agreeing), the same list for
        each further vector."""
        found = self.find(query, scope, vector)
        pairs = [(h.id, 1.0 / n) for n, h in enumerate(found, start=1)]
        return Ranked(
            level=scope.level,
            fused=pairs,
            dense={i: (n, s) for n, (i, s) in enumerate(pairs, start=1)},
            lexical={},
            also=[pairs[:also_k] for _ in also],
            degraded=False,
        )

    def rows(self, scope: SearchScope, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The hits of `ids` as the store's hit rows."""
        wanted = set(ids)
        return {
            h.id: {
                "id": h.id,
                "user_id": h.user_id,
                "text": h.text,
                "segment_id": h.segment_id,
                "source_turn_ids": list(h.turn_ids),
                "turn_ids": list(h.turn_ids),
                "attribution": h.attribution,
                "time_start": h.time_start,
                "time_end": h.time_end,
                "status": (h.status or SummaryStatus.ACTIVE).value,
                "metadata": dict(h.metadata),
                "memory_id": h.memory_id,
                "valid_from": h.valid_from,
                "valid_to": h.valid_to,
            }
            for h in self.hits
            if h.level == scope.level and h.id in wanted and h.user_id == scope.user_id
        }


class WordTokens(HashingEmbedder):
    """A TokenEmbedder twin: one 'token' per word, each the hashing vector of that word, and
    a sentence vector that is their normalised mean (as MiniLM's mean pooling is)."""

    def __init__(self) -> None:
        super().__init__(64)
        self.calls: list[list[str]] = []

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        self.calls.append(list(texts))
        out, toks = [], []
        for text in texts:
            spans = [(m.start(), m.end()) for m in re.finditer(r"\w+", text)]
            vecs = super().embed([text[s:e] for s, e in spans]) if spans else np.zeros((0, 64))
            toks.append(TokenVectors(vecs.astype(np.float16), np.asarray(spans, np.int32)))
            mean = vecs.mean(axis=0) if spans else np.zeros(64)
            out.append(mean / max(np.linalg.norm(mean), 1e-12))
        return np.asarray(out, np.float32), toks
