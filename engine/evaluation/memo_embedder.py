"""An embedder that remembers its recent texts, for evaluation runs.

A LongMemEval question embeds its user turns twice: once on hymem's write path and once for the
flat dense baseline over the same turns, moments later. Remembering the last few thousand
texts makes the second pass free without changing a single vector (the same model sees the same
text). Only evaluation wraps its embedder this way: a Memory in an application embeds each
text once already.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from hymem.embed.embedders import Embedder, TokenEmbedder, TokenVectors

DEFAULT_ITEMS = 8192  # a LongMemEval-S history is ~500 turns; room for several questions


class MemoEmbedder:
    """Wraps an Embedder; identical `name` and `dim`, so stores built with it are the same."""

    def __init__(self, inner: Embedder, max_items: int = DEFAULT_ITEMS) -> None:
        self.inner = inner
        self.max_items = max_items
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """Token vectors are never remembered (the write path asks once per turn); the
        sentence vectors are, for the baselines that embed the same texts next. An inner
        embedder without token vectors gives none, so every summary is embedded as text."""
        if not isinstance(self.inner, TokenEmbedder):
            empty = TokenVectors(np.zeros((0, self.dim), np.float16), np.zeros((0, 2), np.int32))
            return self.embed(texts), [empty] * len(texts)
        vectors, tokens = self.inner.embed_with_tokens(texts)
        with self._lock:
            self.misses += len(texts)
            for text, vec in zip(texts, vectors, strict=True):
                self._memo[text] = vec
                self._memo.move_to_end(text)
            while len(self._memo) > self.max_items:
                self._memo.popitem(last=False)
        return vectors, tokens

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        fresh = self.inner.embed(missing) if missing else np.zeros((0, self.dim), np.float32)
        with self._lock:
            found = {t: self._memo[t] for t in texts if t in self._memo}
            found.update(zip(missing, fresh, strict=True))
            for text, vec in zip(missing, fresh, strict=True):
                self._memo[text] = vec
                self._memo.move_to_end(text)
            while len(self._memo) > self.max_items:
                self._memo.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"MemoEmbedder({self.inner!r})"


__all__ = ["MemoEmbedder"]
