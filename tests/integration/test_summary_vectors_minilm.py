"""Pooled summary vectors with the real MiniLM: the token pass gives exactly `embed`'s vectors,
a pooled summary lands near its own text's embedding, and search finds it as before."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from hymem import Memory
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import SentenceTransformerEmbedder, TokenEmbedder
from hymem.testing import store_of

pytestmark = pytest.mark.integration

TEXTS = [
    "I went to a LGBTQ support group yesterday and it was powerful.",
    "Wow, cool! I painted a lake sunrise last year. " * 40,  # past the 256-piece input
    "ok",
    "  Leading spaces, CAPITALS and caf\u00e9 accents.  ",  # as `encode` tokenizes it
]
SESSION = [
    ("Caroline", "Hey Mel! Good to see you!"),
    ("Melanie", "Hi Caroline! I ran a charity race for mental health last Saturday."),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was powerful."),
    ("Melanie", "Wow, cool! I painted a lake sunrise last year."),
    ("Caroline", "Thanks! I'm researching adoption agencies these days."),
]


def test_token_pass_gives_embed_vectors_and_true_spans(minilm: SentenceTransformerEmbedder) -> None:
    assert isinstance(minilm, TokenEmbedder)
    vectors, tokens = minilm.embed_with_tokens(TEXTS)
    np.testing.assert_allclose(vectors, minilm.embed(TEXTS), atol=1e-5)
    for text, vec, tok in zip(TEXTS, vectors, tokens, strict=True):
        assert tok.vectors.shape[0] == tok.spans.shape[0] > 0
        assert all(text[s:e].strip() for s, e in tok.spans)
        mean = tok.vectors.astype(np.float32).mean(axis=0)
        if len(tok.spans) >= 8:  # [CLS] and [SEP] (left out) weigh on a very short text
            assert float(mean @ vec) / float(np.linalg.norm(mean)) > 0.95
    # truncated at the model's input: the long text's tokens stop well before its end
    assert tokens[1].spans[-1, 1] < 0.6 * len(TEXTS[1])


def _memory(folder: Path, minilm: SentenceTransformerEmbedder, pool: bool) -> Memory:
    config = MemoryConfig.defaults().model_copy(update={"pool_summary_vectors": pool})
    return Memory(folder, config=config, embedder=minilm)


@pytest.mark.parametrize("pool", [True, False])
def test_pooled_summaries_are_found_like_embedded_ones(
    tmp_path: Path, minilm: SentenceTransformerEmbedder, pool: bool
) -> None:
    with _memory(tmp_path / "m", minilm, pool) as mem:
        mem.add(
            [{"speaker": s, "text": t} for s, t in SESSION],
            user_id="u",
            timestamp=datetime(2023, 5, 8, 13, 56),
        )
        mem.flush(user_id="u")
        stored = store_of(mem).get_summaries("u", with_vectors=True)
        assert stored
        own = minilm.embed([s.text for s in stored])
        sims = np.sum(np.asarray([s.vector for s in stored], np.float32) * own, axis=1)
        if pool:
            assert float(sims.min()) > 0.6 and float(sims.max()) < 0.999
        else:
            np.testing.assert_allclose(sims, 1.0, atol=1e-5)
        hits = mem.search(
            "When did Caroline go to the LGBTQ support group?", user_id="u", mode="dense", k=1
        )
        assert "support group" in hits[0].text
