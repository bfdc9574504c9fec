"""No orphan raw dialogue: a segment the summariser kept no fact from is still reachable from
`ask()`, through the segment search in the deep path's candidate pool (real openai client ->
scripted server, real LanceDB + Tantivy)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.types import Level
from hymem.embed.embedders import HashingEmbedder

from tests.fixtures_llm import make_scripted_roles
from tests.fixtures_reader import PASSAGE_ID, pick_where, request_text, shown_candidates

pytestmark = pytest.mark.integration

SEGMENT_BLOCK = re.compile(r'<segment id="([^"]+)"[^>]*>(.*?)</segment>', re.DOTALL)
SESSIONS = [
    ("I adopted a puppy called Biscuit", "That is lovely news"),
    ("I started a pottery class on Mondays", "Sounds relaxing"),
    ("We went kayaking on Lake Tahoe at dawn", "Wow, how cold was the water"),
    ("I painted a sunrise over the hills", "Beautiful colours"),
]


def summarise_all_but_kayak(body: dict[str, Any]) -> dict[str, Any]:
    """A fact per segment, except that the kayak segment gets none: the orphan case."""
    segments = []
    for seg_id, lines in SEGMENT_BLOCK.findall(request_text(body)):
        said = lines.strip().split(": ", 1)[-1]
        facts = [] if "kayak" in lines else [{"text": f"Someone said: {said}", "turns": [1]}]
        segments.append({"segment_id": seg_id, "facts": facts})
    return {"segments": segments}


@pytest.fixture
def orphan_memory(tmp_path: Path, llm_server: Any) -> Any:
    llm_server.add_rule(role="summarise", reply=summarise_all_but_kayak)
    config = MemoryConfig.defaults(embedder="hashing")
    mem = Memory(
        tmp_path / "m",
        config=config,
        embedder=HashingEmbedder(64),
        roles=make_scripted_roles(llm_server),
    )
    for i, (said, reply) in enumerate(SESSIONS):
        turns = [
            {"speaker": "Ann", "text": said, "id": f"s{i}-0"},
            {"speaker": "Bo", "text": reply, "id": f"s{i}-1"},
        ]
        mem.add(turns, user_id="u", session_id=f"s{i}", timestamp=f"2023-05-0{i + 1}T10:00:00")
    mem.flush(user_id="u")
    with mem:
        yield mem


def test_a_segment_without_summary_is_read_by_the_deep_path(
    orphan_memory: Memory, llm_server: Any
) -> None:
    mem = orphan_memory
    summaries = mem.search("kayak", user_id="u", k=20)
    assert summaries and not any("kayak" in h.text.lower() for h in summaries)  # the orphan

    llm_server.reset()
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_where("kayak"))
    llm_server.add_rule(role="deep_answer", reply={"answer": "on Lake Tahoe"})
    llm_server.add_rule(role="reflect", reply={"complete": True})
    ans = mem.ask("Where did Ann go kayaking?", user_id="u", N=10, d=10)

    assert ans.path == "deep" and ans.text == "on Lake Tahoe"
    shown = shown_candidates(llm_server.requests_for("select")[0])
    assert any("kayaking on Lake Tahoe" in text for _, text in shown)
    (deep_body,) = llm_server.requests_for("deep_answer")
    read = PASSAGE_ID.findall(request_text(deep_body))
    segs = [h for h in ans.evidence if h.level == Level.SEGMENT]
    orphan = [h for h in segs if "kayaking" in h.text]
    assert len(orphan) == 1 and orphan[0].id in read
    assert "s2-0" in orphan[0].turn_ids
