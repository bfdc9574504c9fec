"""The deep path reads every segment a selected memory rests on. A repeat said in another
segment is merged at write time into the memory it repeats: the memory keeps its own
`segment_id`, but now also rests on a turn of the other segment, whose raw text the deep answer
must see too. Written by the real write path (extractive summariser, hashing embedder, LanceDB,
Tantivy), asked through the real openai client against the scripted server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem.api.memory import Memory
from hymem.core.config import MemoryConfig
from hymem.core.types import Level
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

from tests.doubles import scripted_config
from tests.fixtures_reader import PASSAGE_ID, pick_where, request_text

pytestmark = pytest.mark.integration

USER = "dana"


def say(mem: Memory, texts: list[str], when: str, session: str) -> Any:
    turns = [{"speaker": "Dana", "text": t} for t in texts]
    mem.add(turns, user_id=USER, session_id=session, timestamp=when)
    return mem.flush(user_id=USER)


@pytest.fixture
def merged_store(tmp_path: Path) -> Iterator[Path]:
    """A store where the Acme memory (segment of s1) merged its repeat said in s2."""
    path = tmp_path / "mem"
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    with Memory(path, config=config, embedder=HashingEmbedder()) as mem:
        say(
            mem,
            ["Hi there, nice weather today.", "I work at Acme as an engineer."],
            "2024-01-01T10:00:00",
            "s1",
        )
        merged = say(
            mem,
            ["I work at Acme in Lisbon now.", "We should grab lunch on Friday."],
            "2024-02-01T10:00:00",
            "s2",
        )
        assert merged.merged  # the repeat was merged into the first memory
    yield path


def test_deep_answer_reads_the_segment_a_merged_repeat_came_from(
    merged_store: Path, llm_server: Any
) -> None:
    with Memory(
        merged_store, config=scripted_config(llm_server), embedder=HashingEmbedder()
    ) as mem:
        (acme,) = [s for s in store_of(mem).get_summaries(USER) if "Acme" in s.text]
        turns = store_of(mem).get_turns(USER, ids=acme.source_turn_ids)
        other = {t.segment_id for t in turns} - {acme.segment_id}
        assert len(other) == 1  # the memory rests on a turn of a second segment
        (elsewhere,) = other
        llm_server.add_rule(role="select", reply=pick_where("Acme"))
        llm_server.add_rule(role="deep_answer", reply={"answer": "at Acme"})
        ans = mem.ask(
            "Where does Dana work?", user_id=USER, depth="deep", N=10, d=10, max_iterations=0
        )
        assert ans.path == "deep" and ans.fallbacks == []
        (deep_body,) = llm_server.requests_for("deep_answer")
        text = request_text(deep_body)
        passages = PASSAGE_ID.findall(text)
        # its own segment, and the one its merged repeat was said in, each once
        assert acme.segment_id in passages and elsewhere in passages
        assert len(passages) == len(set(passages))
        assert "I work at Acme in Lisbon now." in text
        assert elsewhere in [h.id for h in ans.evidence if h.level == Level.SEGMENT]
        (trace,) = mem.traces(user_id=USER)
        assert elsewhere in trace.segment_ids
