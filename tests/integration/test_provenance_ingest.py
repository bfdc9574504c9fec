"""Every summary knows its source turns, end to end: the model behind the real openai client
names the lines (checked against the segment), a reply without a usable attribution falls back
to the whole segment flagged and logged, and search hits and traces carry the source turns."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.types import Attribution, Level
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

from tests.fixtures_llm import make_scripted_roles
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

T0 = "2023-05-08T13:56:00"
SEGMENT = re.compile(r'<segment id="([^"]+)"[^>]*>\n(.*?)\n</segment>', re.S)
LINE = re.compile(r"^#(\d+) .*puppy number (\d+)", re.M)


def turns(n: int) -> list[dict[str, str]]:
    return [
        {"speaker": "Ann", "text": f"I adopted puppy number {i}", "id": f"t{i}"} for i in range(n)
    ]


def prompt(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def attributed(body: dict[str, Any]) -> dict[str, Any]:
    """One fact per line, naming that line's number, as an attributing model replies."""
    segments = []
    for seg_id, lines in SEGMENT.findall(prompt(body)):
        facts = [
            {"text": f"Ann adopted puppy {puppy}.", "turns": [int(n)]}
            for n, puppy in LINE.findall(lines)
        ]
        segments.append({"segment_id": seg_id, "facts": facts})
    return {"segments": segments}


def unattributed(body: dict[str, Any]) -> dict[str, Any]:
    """Bare strings (an older prompt's shape) and an out-of-range line number."""
    segments = []
    for seg_id, _ in SEGMENT.findall(prompt(body)):
        facts: list[Any] = [f"Ann adopted puppies ({seg_id})."]
        facts.append({"text": f"Ann likes dogs ({seg_id}).", "turns": [99]})
        segments.append({"segment_id": seg_id, "facts": facts})
    return {"segments": segments}


def open_mem(path: Path, server: Any) -> Memory:
    config = MemoryConfig.defaults(embedder="hashing", segment_max_turns=3)
    roles = make_scripted_roles(server)
    return Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)


def test_a_model_named_line_becomes_the_summarys_source_turn(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.add_rule(role="summarise", reply=attributed)
    with open_mem(tmp_path / "m", llm_server) as mem:
        mem.add(turns(6), user_id="u", session_id="s", timestamp=T0)
        mem.flush(user_id="u")
        assert "#1 [2023-05-08 13:56] Ann: I adopted puppy number" in prompt(
            llm_server.requests_for("summarise")[0]
        )
        summaries = store_of(mem).get_summaries("u")
        assert summaries
        for s in summaries:
            puppy = re.search(r"puppy (\d+)", s.text)
            assert puppy and s.source_turn_ids == [f"t{puppy.group(1)}"]
            assert s.attribution is Attribution.MODEL
        hit = mem.search("Ann adopted puppy 4", user_id="u", k=1, level=Level.SUMMARY)[0]
        assert (hit.turn_ids, hit.attribution) == (["t4"], Attribution.MODEL)


def test_a_reply_without_usable_attribution_stands_for_its_segment_flagged(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.add_rule(role="summarise", reply=unattributed)
    with capture_events() as events, open_mem(tmp_path / "m", llm_server) as mem:
        mem.add(turns(6), user_id="u", session_id="s", timestamp=T0)
        mem.flush(user_id="u")
        summaries = store_of(mem).get_summaries("u")
        assert summaries
        seg_ids = list(dict.fromkeys(s.segment_id for s in summaries))
        segments = {g.id: g for g in store_of(mem).get_segments("u", seg_ids)}
        for s in summaries:
            assert s.attribution is Attribution.SEGMENT
            assert s.source_turn_ids == segments[s.segment_id].turn_ids
    flagged = [e for e in events if e["event"] == "ingest.summaries_unattributed"]
    assert sum(e["summaries"] for e in flagged) == len(summaries)


def test_extractive_summaries_point_at_the_turn_they_quote(tmp_path: Path) -> None:
    config = MemoryConfig.defaults(embedder="hashing")
    with Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64)) as mem:
        mem.add(
            [
                {"speaker": "Caroline", "text": "Hey Mel, good to see you!", "id": "d1"},
                {"speaker": "Caroline", "text": "I went to a support group yesterday.", "id": "d2"},
                {"speaker": "Melanie", "text": "We went camping at the lake.", "id": "d3"},
            ],
            user_id="u",
            session_id="s",
            timestamp=T0,
        )
        mem.flush(user_id="u")
        got = {s.text: (s.source_turn_ids, s.attribution) for s in store_of(mem).get_summaries("u")}
        assert got and all(a is Attribution.SOURCE for _, a in got.values())
        assert {tuple(t) for t, _ in got.values()} == {("d2",), ("d3",)}
        answer = mem.ask("Where did Melanie go camping?", user_id="u")
        trace = mem.traces(user_id="u")[-1]
        assert "d3" in trace.rounds[0].summary_turn_ids
        assert answer.evidence and all(h.turn_ids for h in answer.evidence)


def test_an_answer_is_found_by_the_question_it_answers(tmp_path: Path) -> None:
    """The extractive write path stores each summary's context (the line before its source),
    so a question worded like that line finds the fact through lexical search."""
    config = MemoryConfig.defaults(embedder="hashing")
    with Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64)) as mem:
        mem.add(
            [
                {"speaker": "Melanie", "text": "What are your plans for the summer?", "id": "d1"},
                {
                    "speaker": "Caroline",
                    "text": "Researching adoption agencies, finally.",
                    "id": "d2",
                },
                {
                    "speaker": "Melanie",
                    "text": "I painted a lake at sunrise yesterday.",
                    "id": "d3",
                },
            ],
            user_id="u",
            session_id="s",
            timestamp=T0,
        )
        mem.flush(user_id="u")
        by_turn = {tuple(s.source_turn_ids): s for s in store_of(mem).get_summaries("u")}
        assert by_turn[("d2",)].context == "Melanie: What are your plans for the summer?"
        hits = mem.search("summer plans", user_id="u", k=1, mode="lexical")
        assert hits and hits[0].turn_ids == ["d2"] and "summer" not in hits[0].text
