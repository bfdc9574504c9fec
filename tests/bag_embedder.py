"""A model-free embedder for the extractive backend's tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hymem.llm.extractive.text import stem, words


class BagEmbedder:
    """Bag of stems hashed into 64 dims: similar wording, similar vectors. No model."""

    name = "fake-bag"
    dim = 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for w in words(text):
                out[row, sum(map(ord, stem(w))) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
