"""A summariser that fails on one buffer never blocks the user's later turns: the extractive
summariser stands in for that buffer (its summaries marked origin "fallback", its segments
listed on the AddResult), each buffer costs at most one model call, and nothing stays pending."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder

from tests.fixtures_ingest import summarise_reply
from tests.fixtures_llm import make_scripted_roles
from tests.llm_fallbacks import MODEL_FAULTS, prompt_text

pytestmark = pytest.mark.integration

T0 = "2023-05-08T13:56:00"
POISON = "zebra-crossing"  # only the first turn says it: only its buffer's prompt fails


def open_mem(path: Path, server: Any, **cfg: Any) -> Memory:
    roles = make_scripted_roles(server, **{k: v for k, v in cfg.items() if k.startswith("llm")})
    config = MemoryConfig.defaults(embedder="hashing", **cfg)
    return Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)


def say(i: int) -> list[dict[str, str]]:
    extra = f" at the {POISON}" if i == 0 else ""
    return [{"speaker": "Ann", "text": f"I adopted puppy number {i}{extra}", "id": f"t{i}"}]


def poisoned_calls(server: Any) -> int:
    return sum(POISON in prompt_text(b) for b in server.requests_for("summarise"))


@pytest.mark.parametrize(("fault", "cfg"), MODEL_FAULTS)
def test_one_failing_buffer_falls_back_and_later_turns_are_stored(
    tmp_path: Path, llm_server: Any, fault: dict[str, Any], cfg: dict[str, Any]
) -> None:
    """Before: every add() asked the model for the failing buffer again (16 adds, 48 calls),
    its turns and every later one stayed pending, and the flush left them pending."""
    llm_server.add_rule(role="summarise", match=POISON, **fault)
    llm_server.add_rule(role="summarise", reply=summarise_reply)
    with open_mem(tmp_path / "m", llm_server, buffer_tokens=16, **cfg) as mem:
        results, asked = [], []
        for i in range(16):
            results.append(mem.add(say(i), user_id="u", session_id="s", timestamp=T0))
            asked.append(poisoned_calls(llm_server))
        results.append(mem.flush(user_id="u"))
        assert results[-1].pending == 0 and mem.pending(user_id="u") == []
        assert mem.stats(user_id="u")["pending_turns"] == 0
        # the failing buffer was asked of the model during one add() only, then never again
        assert asked[-1] >= 1 and len(set(asked) - {0}) == 1
        fallbacks = [s for r in results for s in r.summarise_fallbacks]
        assert fallbacks and len(fallbacks) == len(set(fallbacks))  # counted, and once each
        assert all(r.error is None for r in results)  # nothing left pending to report
        # the failing buffer's turns are searchable through extractive summaries, marked so
        found = mem.search("puppy number 0 zebra", user_id="u", k=5)
        assert any("t0" in h.turn_ids and h.segment_id in fallbacks for h in found)
        marked = [s for s in mem.get_all(user_id="u", limit=500).items if s.origin == "fallback"]
        assert marked and {s.segment_id for s in marked} <= set(fallbacks)
        # later turns got the model's summaries, all stored once
        modelled = mem.search("fact about", user_id="u", k=50)
        assert any("t15" in h.turn_ids for h in modelled)
        assert mem.stats(user_id="u")["turns"] == 16


def test_with_the_fallback_off_the_turns_stay_pending(tmp_path: Path, llm_server: Any) -> None:
    """`summarise_fallback=False` keeps the older contract: the model is asked again later."""
    llm_server.add_rule(role="summarise", fault="500")
    with open_mem(tmp_path / "m", llm_server, summarise_fallback=False) as mem:
        mem.add(say(1), user_id="u", session_id="s", timestamp=T0)
        res = mem.flush(user_id="u")
        assert res.pending == 1 and res.error and res.summarise_fallbacks == []


class ModelSummariser:
    """Extractive roles whose summarise goes to the model (the scripted server)."""

    def __init__(self, model: Any, rest: Any) -> None:
        self._model, self._rest = model, rest
        self.label = model.label

    def summarise(self, segments: list[Any]) -> Any:
        return self._model.summarise(segments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rest, name)


def test_an_evaluation_run_finishes_while_the_summariser_is_down(
    tmp_path: Path, llm_server: Any
) -> None:
    """Before: `hymem eval` aborted with "N turns still pending after flush", and so did every
    rerun. Now the extractive summaries stand in, counted in the ingest report's usage."""
    import json

    from hymem.embed.embedders import resolve_embedder
    from hymem.evaluation.runner import RunOptions, run_locomo
    from hymem.llm import build_roles

    from tests.fixtures_eval import EVAL_MINI

    llm_server.add_rule(role="summarise", fault="500")
    cfg = MemoryConfig.defaults(embedder="hashing")
    embedder = resolve_embedder("hashing")
    model = make_scripted_roles(llm_server)
    roles = ModelSummariser(model, build_roles(cfg, embedder))
    out = tmp_path / "run"
    opts = RunOptions(
        dataset=EVAL_MINI,
        out=out,
        workers=1,
        retrieval_eval=False,
        dashboard=False,
        systems=["hymem"],
        conversations=["conv-mini-2"],
    )
    res = run_locomo(opts, cfg, embedder=embedder, roles=roles, show_progress=False)
    assert res.ingested == ["conv-mini-2"] and res.failed == 0
    report = json.loads((out / "ingest" / "conv-mini-2.json").read_text())
    assert report["usage"]["summarise"]["fallbacks"] >= 1
    assert llm_server.requests_for("summarise")  # the model was asked first
    with Memory(out / "store", config=cfg, embedder=embedder, read_only=True) as mem:
        assert mem.pending(user_id="conv-mini-2") == []


SEGMENT_BLOCK = re.compile(r'<segment id="([^"]+)"[^>]*>\n(.*?)\n</segment>', re.S)
TOPICS = [
    "I adopted a puppy called Rex",
    "My sister Ana moved to Lisbon",
    "We booked flights to Japan for April",
]


def drifting_summary(body: dict[str, Any]) -> dict[str, Any]:
    """What a 0.5B model did: the first segment's sentence repeated under every segment."""
    blocks = SEGMENT_BLOCK.findall(prompt_text(body))
    first = re.sub(r"^#1 \[[^\]]*\] \w+: ", "", blocks[0][1].splitlines()[0])
    return {"segments": [{"segment_id": sid, "facts": [first]} for sid, _ in blocks]}


def test_facts_from_another_segment_are_replaced_by_the_segments_own(
    tmp_path: Path, llm_server: Any
) -> None:
    """Before: the repeated sentence was stored under every segment (a memory pointing at raw
    text that does not say it) and what the other segments said was never stored."""
    llm_server.add_rule(role="summarise", reply=drifting_summary)
    with open_mem(tmp_path / "m", llm_server) as mem:
        messages = [  # a day apart: one buffer of three segments
            {"speaker": "Ann", "text": text, "id": f"t{day}", "timestamp": f"2023-05-0{day + 1}"}
            for day, text in enumerate(TOPICS)
        ]
        mem.add(messages, user_id="u", session_id="s")
        res = mem.flush(user_id="u")
        assert res.pending == 0 and res.error is None
        items = mem.get_all(user_id="u", limit=100).items
        by_segment: dict[str, list[str]] = {}
        for item in items:
            by_segment.setdefault(item.segment_id, []).append(item.text)
        assert len(by_segment) >= 2  # the segmenter may join the last two
        puppy = [sid for sid, texts in by_segment.items() if any("Rex" in t for t in texts)]
        assert len(puppy) == 1  # the sentence stays under its own segment only
        # the other segments' own words were stored, by the extractive summariser, marked so
        for word in ("Lisbon", "Japan"):
            hits = [it for it in items if word in it.text]
            assert hits and all(it.origin == "fallback" for it in hits)
            assert {it.segment_id for it in hits} <= set(res.summarise_fallbacks)
        assert puppy[0] not in res.summarise_fallbacks
        assert res.usage.roles["summarise"].fallbacks == 1  # one call, counted once
        assert res.usage.roles["summarise"].calls == 1


def test_an_extractive_summariser_beside_a_model_asks_it_nothing_at_write_time(
    tmp_path: Path, llm_server: Any
) -> None:
    """`summariser="extractive"`: the turns' own sentences are the summaries (origin
    "summary", no fallback counted), no summarise call reaches the model, and the model still
    answers the ask."""
    llm_server.add_rule(role="summarise", reply=summarise_reply)
    llm_server.add_rule(role="light_answer", reply={"answer": "A puppy.", "complete": True})
    with open_mem(tmp_path / "m", llm_server, summariser="extractive") as mem:
        for i in range(3):
            res = mem.add(say(i), user_id="u", session_id="s", timestamp=T0)
            assert res.summarise_fallbacks == []
        assert mem.flush(user_id="u").summarise_fallbacks == []
        assert llm_server.requests_for("summarise") == []
        assert "summarise" not in res.usage.roles  # no model call is counted
        items = mem.get_all(user_id="u", limit=50).items
        assert items and {s.origin for s in items} == {"summary"}
        assert any("puppy number 1" in s.text for s in items)
        llm_server.add_rule(role="reflect", reply={"complete": True, "new_question": None})
        assert mem.ask("What did Ann adopt?", user_id="u", depth="light").text == "A puppy."
        assert len(llm_server.requests_for("light_answer")) == 1
        assert mem.sleep(user_id="u").resummarised.asked == 0
