"""count_tokens uses the bundled WordPiece tokenizer (real files, no download)."""

from __future__ import annotations

import pytest
from hymem.llm.tokens import _load_encoder, count_tokens, count_tokens_many, estimate_tokens

pytestmark = pytest.mark.integration


def test_count_tokens_uses_the_bundled_wordpiece() -> None:
    assert _load_encoder() is not None
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    # WordPiece splits rare words into pieces; no truncation at the model's 128/512 limits
    assert count_tokens("unbelievably") > 1
    long = "Caroline went to the LGBTQ support group on 7 May 2023. " * 200
    assert count_tokens(long) > 2000


def test_estimate_is_close_to_the_tokenizer() -> None:
    text = "Melanie painted a sunrise over the lake last Saturday, she said, with her kids."
    exact, guess = count_tokens(text), estimate_tokens(text)
    assert abs(exact - guess) <= max(3, exact // 4)


def test_counting_many_at_once_gives_each_text_its_own_count() -> None:
    texts = [
        "",
        "hello world",
        "Caroline: I went to the LGBTQ support group yesterday.",
        "unbelievably " * 300,  # past any truncation the tokenizer file sets
        "  ",
    ]
    assert count_tokens_many(texts) == [count_tokens(t) for t in texts]
    assert count_tokens_many([]) == []
