"""A summary's context key: the tail of the dialogue line before its first source line."""

from __future__ import annotations

from hymem.indexes.keys import (
    CONTEXT_WORDS,
    lexical_text,
    line_tail,
    merged_context,
    summary_context,
)

LINES = [
    "[2023-05-08 13:56] Mel: Hi Caro! What are your plans for the summer?",
    "[2023-05-08 13:57] Caro: Researching adoption agencies. It's been a dream.",
    "[2023-05-08 13:58] Mel: That is wonderful",
]
TURNS = ["t1", "t2", "t3"]


def test_the_context_is_the_line_before_the_first_source_line() -> None:
    assert (
        summary_context(LINES, TURNS, ["t2"]) == "Mel: Hi Caro! What are your plans for the summer?"
    )
    assert summary_context(LINES, TURNS, ["t3", "t2"]) == summary_context(LINES, TURNS, ["t2"])


def test_no_context_for_a_first_line_or_foreign_sources() -> None:
    assert summary_context(LINES, TURNS, ["t1"]) == ""
    assert summary_context(LINES, TURNS, ["elsewhere"]) == ""
    assert summary_context(LINES, TURNS, []) == ""
    assert summary_context(LINES[:2], TURNS, ["t2"]) == ""  # lines and turns disagree


def test_a_long_line_keeps_only_its_tail() -> None:
    long_line = "[2023-05-08 13:56] Bot: " + " ".join(f"w{i}" for i in range(500)) + " Why?"
    tail = line_tail(long_line)
    assert len(tail.split()) == CONTEXT_WORDS and tail.endswith("w498 w499 Why?")


def test_lexical_text_and_merges() -> None:
    assert lexical_text("fact", "") == "fact"
    assert lexical_text("fact", None) == "fact"
    assert lexical_text("fact", "question?") == "fact\nquestion?"
    assert merged_context(["a?", "", "b?", "a?"]) == "a?\nb?"
