"""Hardening, model side: a hostile reply (lone surrogates, NUL, control characters, runaway
sizes) is normalised exactly like user text, so writing and reading keep working; and a retried
`add()` of the same messages without ids is stored once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.prompts.schemas import MAX_FACT_CHARS, MAX_FACTS_PER_SEGMENT
from hymem.testing import store_of

from tests.fixtures_llm import make_scripted_roles
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

SEGMENT = re.compile(r'<segment id="([^"]+)"')
HOSTILE_FACT = "likes \ud800 kumquats\x00 and \x1b[31mred\x1b[0m"


def hostile_summary(body: dict[str, Any]) -> dict[str, Any]:
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    ids = list(dict.fromkeys(SEGMENT.findall(text)))
    # each fact names the segment's kumquats: a fact from outside its segment is dropped
    facts = [HOSTILE_FACT, "kumquats " * 2_500, *[f"kumquats fact {i}" for i in range(200)]]
    return {"segments": [{"segment_id": s, "facts": facts} for s in ids]}


def open_mem(path: Path, server: Any, **cfg: Any) -> Memory:
    roles = make_scripted_roles(server)
    config = MemoryConfig.defaults(embedder="hashing", **cfg)
    return Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)


MESSAGES = [
    {"role": "user", "content": "I like kumquats a lot"},
    {"role": "assistant", "content": "Kumquats are tart and sweet"},
]


def test_a_hostile_summary_is_stored_clean(tmp_path: Path, llm_server: Any) -> None:
    """Before: pyarrow raised a raw UnicodeEncodeError after the turns were stored, and every
    later add/flush of the user failed the same way."""
    llm_server.add_rule(role="summarise", reply=hostile_summary)
    with open_mem(tmp_path / "m", llm_server) as mem:
        mem.add(MESSAGES, user_id="u", session_id="s")
        res = mem.flush(user_id="u")
        assert res.error is None and res.pending == 0
        texts = [s.text for s in store_of(mem).get_summaries("u")]
        assert "likes \ufffd kumquats and [31mred[0m" in texts
        kept = MAX_FACTS_PER_SEGMENT - 2  # after the hostile and the long fact
        assert f"kumquats fact {kept - 1}" in texts and f"kumquats fact {kept}" not in texts
        assert max(len(t) for t in texts) <= MAX_FACT_CHARS + 1
        assert mem.search("kumquats", user_id="u", mode="lexical")
        mem.add([{"role": "user", "content": "more"}], user_id="u", session_id="s2")
        assert mem.flush(user_id="u").error is None  # the user is not stuck


def test_a_hostile_answer_is_returned_clean_and_traced(tmp_path: Path, llm_server: Any) -> None:
    llm_server.add_rule(role="summarise", reply=hostile_summary)
    llm_server.add_rule(
        role="light_answer", reply={"answer": "kum\ud800quats\x07", "complete": True}
    )
    llm_server.add_rule(role="reflect", reply={"complete": True})
    with open_mem(tmp_path / "m", llm_server) as mem:
        mem.add(MESSAGES, user_id="u", session_id="s")
        mem.flush(user_id="u")
        with capture_events() as events:
            answer = mem.ask("what fruit?", user_id="u", depth="light")
            traces = mem.traces(user_id="u")
        assert answer.text == "kum\ufffdquats"
        assert [t.trace_id for t in traces] == [answer.trace_id]
        assert not [e for e in events if e.get("event") == "ask.trace_failed"]


# The two ways a retry is recognised: the call's request id (any config), or, for a caller
# that names nothing, equal text within retry_window_s (off by default: opt in).
RETRY_NAMED = [
    pytest.param({"request_id": "req-1"}, {}, id="request_id"),
    pytest.param({}, {"retry_window_s": 600}, id="equal_text_opted_in"),
]


@pytest.mark.parametrize(("named", "cfg"), RETRY_NAMED)
def test_a_retried_add_is_stored_once(
    tmp_path: Path, llm_server: Any, named: dict[str, Any], cfg: dict[str, Any]
) -> None:
    """Before: the retry stored every message a second time (ids included the sequence)."""
    llm_server.add_rule(role="summarise", fault="500", times=50)
    # no extractive stand-in: the turns stay pending while the summariser is down
    off = {"summarise_fallback": False}
    with open_mem(tmp_path / "m", llm_server, buffer_tokens=16, **off, **cfg) as mem:
        first = mem.add(MESSAGES, user_id="u", session_id="s", **named)
        assert mem.flush(user_id="u").error is not None  # the summariser is down
        assert first.pending == 2
        again = mem.add(MESSAGES, user_id="u", session_id="s", **named)  # the caller retries
        assert again.turn_ids == first.turn_ids and again.new_turn_ids == []
        assert mem.stats(user_id="u")["turns"] == 2
        llm_server.reset()
        llm_server.add_rule(role="summarise", reply=hostile_summary)
        assert mem.flush(user_id="u").pending == 0


@pytest.mark.parametrize(("named", "cfg"), RETRY_NAMED)
def test_a_retry_is_recognised_after_a_restart(
    tmp_path: Path, llm_server: Any, named: dict[str, Any], cfg: dict[str, Any]
) -> None:
    llm_server.add_rule(role="summarise", fault="500", times=50)
    with open_mem(tmp_path / "m", llm_server, buffer_tokens=16, **cfg) as mem:
        first = mem.add(MESSAGES, user_id="u", session_id="s", **named)
    with open_mem(tmp_path / "m", llm_server, buffer_tokens=16, **cfg) as mem:
        again = mem.add(MESSAGES, user_id="u", session_id="s", **named)
        assert again.turn_ids == first.turn_ids
        assert mem.stats(user_id="u")["turns"] == 2


def test_genuine_repeats_are_new_turns(tmp_path: Path, llm_server: Any) -> None:
    llm_server.add_rule(role="summarise", fault="500", times=50)
    ok = [{"role": "user", "content": "ok"}]
    with open_mem(tmp_path / "m", llm_server, retry_window_s=600) as mem:  # the guess opted in
        mem.add(ok, user_id="u", session_id="s")
        mem.add([{"role": "assistant", "content": "great"}], user_id="u", session_id="s")
        mem.add(ok, user_id="u", session_id="s")  # not the previous call: a new turn
        mem.add(ok, user_id="u", session_id="other")  # another session: a new turn
        assert mem.stats(user_id="u")["turns"] == 4
    with open_mem(tmp_path / "n", llm_server) as mem:
        mem.add(ok, user_id="u", session_id="s")
        mem.add(ok, user_id="u", session_id="s")  # by default, said twice is two turns
        mem.add(ok, user_id="u", session_id="s", request_id="r1")
        mem.add(ok, user_id="u", session_id="s", request_id="r2")  # two requests
        assert mem.stats(user_id="u")["turns"] == 4


def test_a_runaway_reply_is_invalid_not_parsed() -> None:
    from hymem.llm.structured import MAX_REPLY_CHARS, InvalidReply, parse_reply
    from hymem.prompts.schemas import DeepAnswerOutput

    with pytest.raises(InvalidReply, match="at most"):
        parse_reply('{"answer": "' + "x" * MAX_REPLY_CHARS + '"}', DeepAnswerOutput)
    assert parse_reply('{"answer": "ok\\u0000"}', DeepAnswerOutput).answer == "ok"
