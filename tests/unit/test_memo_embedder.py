"""The evaluation's remembering embedder returns exactly the inner embedder's vectors."""

from __future__ import annotations

import numpy as np
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.memo_embedder import MemoEmbedder


class Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.seen: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.seen.extend(texts)
        return super().embed(texts)


def test_same_vectors_and_each_text_embedded_once() -> None:
    inner = Counting()
    memo = MemoEmbedder(inner)
    first = memo.embed(["a cat", "a dog", "a cat"])
    again = memo.embed(["a dog", "a bird"])
    assert inner.seen == ["a cat", "a dog", "a bird"]
    np.testing.assert_array_equal(first, HashingEmbedder(64).embed(["a cat", "a dog", "a cat"]))
    np.testing.assert_array_equal(again, HashingEmbedder(64).embed(["a dog", "a bird"]))
    assert (memo.name, memo.dim) == (inner.name, inner.dim)
    assert memo.embed([]).shape == (0, 64)


def test_bounded_oldest_forgotten() -> None:
    inner = Counting()
    memo = MemoEmbedder(inner, max_items=2)
    memo.embed(["x", "y", "z"])
    memo.embed(["x"])  # forgotten: embedded again
    assert inner.seen == ["x", "y", "z", "x"]


def test_token_pass_is_remembered_for_the_baselines_that_follow() -> None:
    from tests.doubles_retrieval import WordTokens

    inner = WordTokens()
    memo = MemoEmbedder(inner)
    vectors, tokens = memo.embed_with_tokens(["a cat sat", "a dog"])
    assert [t.spans.shape[0] for t in tokens] == [3, 2]
    np.testing.assert_array_equal(memo.embed(["a dog"])[0], vectors[1])  # a memo hit
    assert inner.calls == [["a cat sat", "a dog"]]


def test_no_token_vectors_from_an_embedder_without_them() -> None:
    memo = MemoEmbedder(Counting())
    vectors, tokens = memo.embed_with_tokens(["a cat"])
    assert vectors.shape == (1, 64)
    assert tokens[0].vectors.shape == (0, 64)  # nothing to pool: summaries are embedded
