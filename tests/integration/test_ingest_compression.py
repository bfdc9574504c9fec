"""LLMLingua-2 pre-compression and attention boundaries on a tiny random model built here
(no weights are downloaded; tiktoken's cl100k_base is never fetched)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import ConfigError
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of
from hymem.write.compression import LLMLinguaCompressor, load_compressor

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEXTS = [
    "hey I went to the support group yesterday and it was good.",
    "how have the kids been at work",
    "we went camping at the beach",
    "I am painting the lake",
    "the pottery bowl is good",
    "I go to work",
]


@pytest.fixture
def offline_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """No tiktoken cache configured: construction must not need cl100k_base at all."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)


def test_compressor_builds_offline_and_keeps_every_turn(
    tiny_llmlingua: Path, offline_tiktoken: None
) -> None:
    comp = LLMLinguaCompressor(tiny_llmlingua, rate=0.5)
    out = comp.compress(TEXTS)
    assert len(out) == len(TEXTS) and all(o.strip() for o in out)
    assert sum(len(o.split()) for o in out) < sum(len(t.split()) for t in TEXTS)
    for raw, squeezed in zip(TEXTS, out, strict=True):  # words are dropped, never invented
        assert set(squeezed.rstrip(".").split()) <= set(raw.replace(".", " ").split())
    assert LLMLinguaCompressor(tiny_llmlingua, rate=1.0).compress(TEXTS) == TEXTS
    comp.close()


def test_attention_scores_follow_app_c1(tiny_llmlingua: Path, offline_tiktoken: None) -> None:
    comp = LLMLinguaCompressor(tiny_llmlingua, rate=0.7)
    adjacent = comp.adjacent_attention(TEXTS)
    assert adjacent[:2] == [None, None]
    assert all(a is not None and 0.0 <= a <= 1.0 for a in adjacent[2:])
    assert comp.adjacent_attention(TEXTS) == adjacent  # deterministic
    bounds = comp.attention_boundaries(TEXTS)
    assert bounds <= set(range(2, len(TEXTS)))
    many = TEXTS * 30  # more than one 512-token window: every window restarts the sequence
    assert len(comp.adjacent_attention(many)) == len(many)


def test_model_name_and_folder_are_checked(tiny_llmlingua: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "tiny-model"
    shutil.copytree(tiny_llmlingua, wrong)
    with pytest.raises(ConfigError, match="bert-base-multilingual-cased"):
        LLMLinguaCompressor(wrong)
    with pytest.raises(ConfigError, match="local model folder"):
        LLMLinguaCompressor(tmp_path / "missing-bert-base-multilingual-cased")
    assert load_compressor(MemoryConfig.defaults()) is None
    assert MemoryConfig.defaults().compression_enabled is False


def test_memory_compresses_only_the_summarisers_input(
    tmp_path: Path, tiny_llmlingua: Path, offline_tiktoken: None
) -> None:
    cfg = MemoryConfig.defaults(
        embedder="hashing", compressor_model=str(tiny_llmlingua), compression_rate=0.5
    )
    msgs: list[dict[str, Any]] = [
        {"speaker": "Ann", "text": t, "id": f"t{i}"} for i, t in enumerate(TEXTS)
    ]
    with Memory(tmp_path / "m", config=cfg, embedder=HashingEmbedder(64)) as mem:
        mem.add(msgs, user_id="u", session_id="s", timestamp="2023-05-08T13:56:00")
        res = mem.flush(user_id="u")
        assert res.error is None and res.pending == 0
        segments = store_of(mem).get_segments("u", res.segments_written)
        raw = "\n".join(s.text for s in segments)
        for text in TEXTS:  # Level-2 keeps every raw turn
            assert text in raw
        assert all(s.compressed_text for s in segments)
        assert sum(len(s.compressed_text or "") for s in segments) < len(raw)
        assert all(s.compressed_text.startswith("[2023-05-08 13:56] Ann:") for s in segments)
