"""Issue 49, item 5: "Where does Alice live?" asked of user `alice`, whose chat-format turns
are summarised as "User lives in Lisbon", answers from the user's own facts, not from the
nearest name ("User's sister Maria lives in Berlin"). Real MiniLM, extractive backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig

pytestmark = pytest.mark.integration

SAID = [
    "I live in Lisbon",
    "I adopted a cat called Luna",
    "I work as a nurse at the city hospital",
    "My favourite food is grilled sardines",
    "My sister Maria lives in Berlin",
    "I play the cello in an orchestra",
]


def _memory(folder: Path, minilm: Any, speaker: str | None) -> Memory:
    mem = Memory(folder, config=MemoryConfig.defaults(llm="extractive"), embedder=minilm)
    turns: list[dict[str, str]] = []
    for text in SAID:
        if speaker is None:
            turns += [{"role": "user", "content": text}, {"role": "assistant", "content": "Ok."}]
        else:
            turns += [{"speaker": speaker, "text": text}, {"speaker": "Bot", "text": "Ok."}]
    mem.add(turns, user_id="alice")
    mem.flush(user_id="alice")
    return mem


@pytest.mark.parametrize("speaker", [None, "Alice"], ids=["role-user", "speaker-Alice"])
def test_a_question_naming_the_user_reads_the_users_own_facts(
    tmp_path: Path, minilm: Any, speaker: str | None
) -> None:
    with _memory(tmp_path / "m", minilm, speaker) as mem:
        for depth in ("light", "auto"):
            answer = mem.ask("Where does Alice live?", user_id="alice", depth=depth)
            assert "Lisbon" in answer.text and "Berlin" not in answer.text, (depth, answer.text)
            assert answer.question == "Where does Alice live?"
        sister = mem.ask("Where does Alice's sister live?", user_id="alice", depth="light")
        assert "Berlin" in sister.text
        context = mem.context("Where does ALICE live?", user_id="alice", depth="light")
        assert "Lisbon" in context[0].text
