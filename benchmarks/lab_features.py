"""Per-question features the lab's re-ranking ideas need beyond the pools, computed once and
cached beside them in `benchmarks/.lab/locomo/`:

* `tokens.pkl`: MiniLM token vectors of every summary and question (for MaxSim);
* `aspect.pkl`: each question's anchors and aspect, found by the engine's own rule
  (`hymem.search.anchors.find_anchors` over the question's hybrid candidates), and the
  aspect's MiniLM vector.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hymem.embed.embedders import SentenceTransformerEmbedder
from hymem.search.anchors import find_anchors
from lab_pool import Pool
from lab_stores import LAB

TOKENS = LAB / "locomo" / "tokens.pkl"
ASPECTS = LAB / "locomo" / "aspect.pkl"


def _cached(path: Path, build: Any) -> Any:
    if not path.exists():
        with open(path, "wb") as fh:
            pickle.dump(build(), fh)
    with open(path, "rb") as fh:
        return pickle.load(fh)


def token_vectors(pool: Pool) -> dict[str, Any]:
    """{user: {summary id: token vectors}, "__q__": [question token vectors]}."""

    def build() -> dict[str, Any]:
        emb = SentenceTransformerEmbedder()
        out: dict[str, Any] = {}
        for user, texts in pool.summary_text.items():
            ids = list(texts)
            _, toks = emb.embed_with_tokens([texts[i] for i in ids])
            out[user] = {i: t.vectors for i, t in zip(ids, toks, strict=True)}
        _, qt = emb.embed_with_tokens([q.question for q in pool.questions])
        out["__q__"] = [t.vectors for t in qt]
        return out

    return _cached(TOKENS, build)


def aspects(pool: Pool) -> dict[str, Any]:
    """{"aspects": [text], "anchors": [[name]], "vec": matrix}, one row per question."""

    def build() -> dict[str, Any]:
        found = [find_anchors(q.question, [s.text for s in q.summaries]) for q in pool.questions]
        texts = [a.aspect for a in found]
        vec = SentenceTransformerEmbedder().embed(texts)
        return {"aspects": texts, "anchors": [list(a.names) for a in found], "vec": vec}

    return _cached(ASPECTS, build)


__all__ = ["aspects", "token_vectors"]
