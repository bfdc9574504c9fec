"""The extractive roles with the real MiniLM: thresholds hold for a real embedding model, and
the whole write -> read path runs with no language model at all."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from hymem import Memory
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import SentenceTransformerEmbedder
from hymem.llm import build_roles
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.roles import ContextItem, SegmentInput

pytestmark = pytest.mark.integration

T0 = datetime(2023, 5, 8, 13, 56)
LINES = [
    "[2023-05-08 13:56] Caroline: Hey Mel! Good to see you!",
    "[2023-05-08 13:57] Melanie: Hi Caroline! I ran a charity race for mental health last "
    "Saturday.",
    "[2023-05-08 13:58] Caroline: I went to a LGBTQ support group yesterday and it was powerful.",
    "[2023-05-08 13:59] Melanie: Wow, cool! I painted a lake sunrise last year.",
    "[2023-05-08 14:00] Caroline: Thanks! I'm researching adoption agencies these days.",
]


@pytest.fixture
def roles(minilm: SentenceTransformerEmbedder) -> ExtractiveRoles:
    built = build_roles(MemoryConfig.defaults(), minilm)
    assert isinstance(built, ExtractiveRoles)
    assert built.label == "extractive"
    return built


def test_summarise_then_answer_with_real_embeddings(roles: ExtractiveRoles) -> None:
    [summary] = roles.summarise(
        [SegmentInput(segment_id="seg", lines=LINES, session_time=T0)]
    ).output.segments
    assert "Caroline went to a LGBTQ support group on 7 May 2023 and it was powerful." in (
        summary.texts
    )
    assert not any("Good to see you" in f for f in summary.texts)
    context = [
        ContextItem(id=f"f{i}", text=fact, time_start=T0) for i, fact in enumerate(summary.texts)
    ]

    when = roles.light_answer("When did Caroline go to the LGBTQ support group?", context, [])
    assert when.output.answer == "7 May 2023"
    assert when.output.complete is True

    race = roles.light_answer("When did Melanie run a charity race?", context, [])
    assert race.output.answer == "6 May 2023"  # "last Saturday": the core words a calendar day

    # the facts never mention a pet: the verdict must escalate, not bluff
    pet = roles.light_answer("What is the name of Caroline's guinea pig?", context, [])
    assert pet.output.complete is False

    chosen = roles.select_events("What is Caroline researching?", context).output.ids
    assert 1 <= len(chosen) <= (len(context) + 1) // 2
    assert any("adoption" in context[int(i[1:])].text for i in chosen)


def test_deep_answer_and_update_with_real_embeddings(roles: ExtractiveRoles) -> None:
    passage = ContextItem(id="seg", text="\n".join(LINES), time_start=T0)
    deep = roles.deep_answer("When did Melanie paint a sunrise?", [passage], [])
    assert deep.output.answer == "2022"
    what = roles.deep_answer("What is Caroline researching?", [passage], [])
    assert what.output.answer == "adoption agencies these days"

    older = ContextItem(id="a", text="Melanie painted a lake sunrise in 2022.")
    same = ContextItem(id="b", text="Melanie painted a lake sunrise in 2022")
    paraphrase = ContextItem(id="c", text="In 2022 Melanie made a painting of a sunrise.")
    assert roles.update(older, [paraphrase]).output.action == "ignore"
    merged = roles.update(older, [paraphrase, same]).output
    assert (merged.action, merged.evidence_id) == ("update", "b")


def test_memory_runs_end_to_end_without_a_model(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    messages = [
        {"speaker": line.split("] ")[1].split(":")[0], "text": line.split(": ", 1)[1]}
        for line in LINES
    ]
    with Memory(tmp_path / "mem", embedder=minilm) as mem:
        mem.add(messages, user_id="u", session_id="s1", timestamp="2023-05-08T13:56:00")
        mem.flush(user_id="u")
        answer = mem.ask("When did Caroline go to the LGBTQ support group?", user_id="u")
    assert answer.text == "7 May 2023"
    assert answer.backend == "extractive"
    assert answer.prompt_versions.get("light_answer") == "extractive"
