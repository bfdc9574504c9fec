"""`salvage_answer`: the answer in an answer role's plain-text reply, and only in prose."""

from __future__ import annotations

import pytest
from hymem.llm.structured import MAX_SALVAGE_CHARS, salvage_answer


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("I think Jon lost his job in January.", "I think Jon lost his job in January."),
        ("  Answer: in January 2023\n", "in January 2023"),
        ('"Paris"', "Paris"),
        ("3", "3"),
        ("```\nThe support group, on 7 May 2023.\n```", "The support group, on 7 May 2023."),
    ],
)
def test_prose_is_the_answer(reply: str, answer: str) -> None:
    assert salvage_answer(reply) == answer


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   \n",
        '{"answer": "Paris", "complete": true}',  # JSON: validated or repaired, never salvaged
        '{"answr": "Paris"}',
        'Sure! Here is the answer: {"answer": unquoted, oops',  # broken JSON is not prose
        '```json\n{"answer": "Paris"}\n```',
        '[{"answer": "Paris"}]',
        "x" * (MAX_SALVAGE_CHARS + 1),  # a runaway generation
        "Answer:",
        "true",
        "null",
    ],
)
def test_no_answer_outside_prose(reply: str) -> None:
    assert salvage_answer(reply) is None
