"""End to end with no model: the extractive backend over real MiniLM, LanceDB and Tantivy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.core.types import Level
from hymem.llm.tokens import count_tokens

from tests.fixtures_reader import alice_events, bob_events, seed_memory

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def minilm_memory(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[Memory]:
    """Extractive roles over the real MiniLM (the session's shared instance)."""
    path: Path = tmp_path_factory.mktemp("reader-extractive") / "mem"
    mem = Memory(path, config=MemoryConfig.defaults(llm="extractive"), embedder=minilm)
    seed_memory(mem, "alice", alice_events())
    seed_memory(mem, "bob", bob_events())
    yield mem
    mem.close()


@pytest.mark.parametrize(
    ("question", "fact_id", "in_answer"),
    [
        ("When did Caroline go to the LGBTQ support group?", "alice-sum0-0", "7 May 2023"),
        ("What did Melanie paint?", "alice-sum1-0", "sunrise"),
        ("Which book did Melanie read?", "alice-sum11-0", "Becoming Nicole"),
        ("What did Caroline's grandmother give her?", "alice-sum4-0", None),
    ],
)
def test_single_fact_questions_return_the_supporting_sentence(
    minilm_memory: Memory, question: str, fact_id: str, in_answer: str | None
) -> None:
    ans = minilm_memory.ask(question, user_id="alice")
    assert ans.backend == "extractive"
    assert ans.evidence and ans.evidence[0].id == fact_id
    assert ans.evidence[0].level == Level.SUMMARY
    if in_answer is not None:
        assert in_answer in ans.text
    assert all(h.user_id == "alice" for h in ans.evidence)


def test_extractive_deep_path_reads_the_raw_dialogue(minilm_memory: Memory) -> None:
    ans = minilm_memory.ask("What did Melanie paint?", user_id="alice", depth="deep")
    segs = [h for h in ans.evidence if h.level == Level.SEGMENT]
    assert ans.path == "deep" and ans.escalation_reason == "forced"
    assert "alice-seg1" in [h.id for h in segs]
    assert any("I painted a sunrise over the lake" in h.text for h in segs)
    assert "sunrise" in ans.text
    (trace,) = [t for t in minilm_memory.traces(user_id="alice") if t.trace_id == ans.trace_id]
    assert trace.backend == "extractive" and trace.segment_ids == [h.id for h in segs]


def test_context_without_a_model_returns_what_the_paths_read(minilm_memory: Memory) -> None:
    light = minilm_memory.context("Which book did Melanie read?", user_id="alice", depth="light")
    assert light[0].id == "alice-sum11-0" and len(light) > 10  # the light budget, not a count
    assert sum(count_tokens(h.text) for h in light) <= minilm_memory.config.light_tokens
    deep = minilm_memory.context("Which book did Melanie read?", user_id="alice", depth="deep")
    assert deep and all(h.level == Level.SEGMENT for h in deep)
    assert "alice-seg11" in [h.id for h in deep]


def test_write_path_then_ask_returns_the_supporting_sentence(minilm_memory: Memory) -> None:
    messages = [
        {"speaker": "Dana", "text": "I finally booked my flight to Lisbon for the conference."},
        {"speaker": "Eli", "text": "Nice! I started learning the cello this month."},
        {"speaker": "Dana", "text": "My sister Rosa is getting married in Porto in August."},
        {"speaker": "Eli", "text": "Congratulations to her! My cat Miso turned three today."},
    ]
    minilm_memory.add(messages, user_id="dana", session_id="s1", timestamp="2023-07-02T18:30:00")
    result = minilm_memory.flush(user_id="dana")
    assert result.summaries_written and result.error is None
    cases = [
        ("Where is Rosa getting married?", "Porto"),
        ("What instrument is Eli learning?", "cello"),
        ("What is the name of Eli's cat?", "Miso"),
    ]
    for question, key in cases:
        ans = minilm_memory.ask(question, user_id="dana")
        assert key in ans.evidence[0].text, (question, ans.evidence[0].text)
        assert key in ans.text, (question, ans.text)
        assert all(h.user_id == "dana" for h in ans.evidence)


@pytest.mark.parametrize(
    ("said", "question", "expected"),
    [
        # a time the text states, not the day it was said (issue #28, case 7)
        ("I moved to Lisbon in March.", "When did I move?", "March"),
        ("I moved to Lisbon in March.", "When did the user move to Lisbon?", "March"),
        # a naming question gets the name, not the rest of the sentence
        ("My cat Luna is afraid of thunderstorms.", "What is my cat called?", "Luna"),
        ("My cat Luna is afraid of thunderstorms.", "What is the name of the user's cat?", "Luna"),
        # "what <noun>" gets the other side of the copula, not the question's own words
        ("My favourite food is ramen.", "What food does the user like?", "ramen"),
        ("Ramen is my favourite food.", "What food do I like?", "Ramen"),
    ],
)
def test_simple_personal_questions_get_the_short_answer(
    tmp_path: Path, minilm: Any, said: str, question: str, expected: str
) -> None:
    """One plain `add` of a personal fact, then the question a person would ask about it."""
    with Memory(
        tmp_path / "mem", config=MemoryConfig.defaults(llm="extractive"), embedder=minilm
    ) as mem:
        mem.add(said, user_id="me", timestamp="2024-06-10T10:00:00")
        mem.flush(user_id="me")
        ans = mem.ask(question, user_id="me")
    assert ans.text == expected, (question, ans.text, [h.text for h in ans.evidence])
