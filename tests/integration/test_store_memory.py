"""The store through the `Memory` facade, with the real MiniLM embedder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import EmbedderMismatchError, UserInputError
from hymem.embed.embedders import SentenceTransformerEmbedder
from hymem.testing import store_of

from tests.fixtures_store import commit_texts

pytestmark = pytest.mark.integration

FACTS = [
    "Alice adopted a small kitten from the shelter",
    "Bob repaired the brakes on his car",
    "The weather in Lisbon was rainy all week",
    "Carol started learning to play the violin",
]


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory, minilm: SentenceTransformerEmbedder) -> Any:
    """One memory for the module (its tests only read)."""
    folder = tmp_path_factory.mktemp("mem") / "m"
    with Memory(folder, config=MemoryConfig.defaults(), embedder=minilm) as m:
        commit_texts(store_of(m), minilm, "alice", FACTS, segment_id="g1")
        yield m


def test_minilm_finds_meaning_without_shared_words(mem: Memory) -> None:
    hits = mem.search("feline pet", user_id="alice", k=2)
    assert hits[0].text == FACTS[0]
    assert hits[0].dense_rank == 1 and hits[0].lexical_rank is None
    music = mem.search("musical instrument lessons", user_id="alice", k=1, mode="dense")
    assert music[0].text == FACTS[3]


def test_minilm_vectors_are_384_d_unit_rows(minilm: SentenceTransformerEmbedder) -> None:
    vecs = minilm.embed(["one", "two", "three"])
    assert vecs.shape == (3, 384) and minilm.name == "all-MiniLM-L6-v2"
    assert abs(float((vecs**2).sum(axis=1).mean()) - 1.0) < 1e-4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"query": ""}, "query"),
        ({"query": "   \n"}, "query"),
        ({"k": 0}, "k must be"),
        ({"k": -1}, "k must be"),
        ({"k": 2.5}, "k must be"),
        ({"level": "chapter"}, "unknown level"),
        ({"user_id": ""}, "user_id"),
        ({"user_id": None}, "user_id"),
        ({"mode": "magic"}, "mode"),
    ],
)
def test_bad_search_arguments_are_typed_errors(
    mem: Memory, kwargs: dict[str, Any], match: str
) -> None:
    args: dict[str, Any] = {"query": "kitten", "user_id": "alice", "k": 3, **kwargs}
    with pytest.raises(UserInputError, match=match):
        mem.search(args.pop("query"), **args)


def test_missing_user_id_keyword_is_refused(mem: Memory) -> None:
    with pytest.raises(TypeError):
        mem.search("kitten")  # type: ignore[call-arg]


def test_empty_results_for_unknown_user(mem: Memory) -> None:
    assert mem.search("kitten", user_id="nobody", k=5) == []
    assert mem.stats(user_id="nobody")["summaries"] == 0
    assert mem.stats(user_id="alice")["summaries"] == len(FACTS)


def test_reopening_with_another_embedder_is_refused(tmp_path: Path) -> None:
    Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing:64")).close()
    with pytest.raises(EmbedderMismatchError, match="hashing-64"):
        Memory(tmp_path / "m", config=MemoryConfig.defaults())


@pytest.mark.slow
def test_loading_the_embedder_leaves_the_environment_alone() -> None:
    """In a fresh interpreter: this process may already have loaded a model."""
    code = (
        "import os\n"
        "from hymem.embed.embedders import SentenceTransformerEmbedder\n"
        "assert SentenceTransformerEmbedder().embed(['hello']).shape == (1, 384)\n"
        "offline = [k for k in os.environ if k.endswith('_OFFLINE')]\n"
        "assert not offline, offline\n"
    )  # (torch itself sets a few variables on import: not ours to police)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]


def test_minilm_batches_by_length_keep_each_text_its_own_vector(
    minilm: SentenceTransformerEmbedder,
) -> None:
    texts = ["short one", "a much longer text " * 40, "mid sized sentence about a cat", "x"]
    together = minilm.embed(texts)
    alone = np.stack([minilm.embed([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5
