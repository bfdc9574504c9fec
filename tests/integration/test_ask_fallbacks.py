"""A model that fails inside ask() never fails the ask: the deep path falls back to the light
answer, a failed light answer to the extractive one, and a fallback's answer is never
`complete`; the Answer and its trace say what stood in. Real openai client, real LanceDB and
Tantivy, a scripted (fault-injecting) server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder

from tests.fixtures_ingest import summarise_reply
from tests.fixtures_llm import assert_loopback, make_scripted_roles
from tests.llm_fallbacks import CONTEXT_OVERFLOW, MODEL_FAULTS, SizedLLMServer

pytestmark = pytest.mark.integration

T0 = "2023-05-08T13:56:00"
LIGHT = {"answer": "Ann adopted a puppy.", "complete": False}  # incomplete: escalates
QUESTION = "What did Ann adopt?"


@pytest.fixture
def server() -> Iterator[SizedLLMServer]:
    srv = SizedLLMServer().start()
    assert_loopback(srv.base_url)
    try:
        yield srv
    finally:
        srv.stop()


def remembered(path: Path, server: SizedLLMServer, **cfg: Any) -> Memory:
    """A memory of twelve stored turns in six sessions (so six segments at least)."""
    server.add_rule(role="summarise", reply=summarise_reply, times=50)
    llm = {k: v for k, v in cfg.items() if k.startswith("llm")}
    roles = make_scripted_roles(server, **llm)
    config = MemoryConfig.defaults(embedder="hashing", **cfg)
    mem = Memory(path, config=config, embedder=HashingEmbedder(64), roles=roles)
    for s in range(6):
        lines = [
            {
                "speaker": "Ann",
                "text": f"I adopted puppy number {i} from the shelter",
                "id": f"t{i}",
            }
            for i in range(2 * s, 2 * s + 2)
        ]
        mem.add(lines, user_id="u", session_id=f"s{s}", timestamp=T0)
    assert mem.flush(user_id="u").pending == 0
    return mem


def last_trace(mem: Memory) -> Any:
    return mem.traces(user_id="u")[-1]


@pytest.mark.parametrize(("fault", "cfg"), MODEL_FAULTS)
def test_a_failing_deep_path_falls_back_to_the_light_answer(
    tmp_path: Path, server: SizedLLMServer, fault: dict[str, Any], cfg: dict[str, Any]
) -> None:
    """Before: a timeout or 5xx in select/deep_answer made ask() raise LLMUnavailable."""
    with remembered(tmp_path / "m", server, **cfg) as mem:
        server.add_rule(role="light_answer", reply=LIGHT)
        server.add_rule(role="select", **fault)
        server.add_rule(role="deep_answer", **fault)
        server.add_rule(role="reflect", reply={"complete": True})
        ans = mem.ask(QUESTION, user_id="u", depth="auto")
        assert ans.escalated and ans.complete is False
        assert ans.fallbacks  # each failure is listed
        if fault["fault"] != "malformed":  # an invalid reply has the roles' own fallbacks
            assert ans.text == LIGHT["answer"] and ans.fallback == "light"
            assert any(f.startswith("deep_answer:") and "light answer" in f for f in ans.fallbacks)
            trace = last_trace(mem)
            assert trace.fallback == "light" and trace.complete is False and trace.error is None


def test_a_deep_ask_whose_deep_answer_fails_asks_the_light_answer(
    tmp_path: Path, server: SizedLLMServer
) -> None:
    """depth="deep" reads no light answer first: one is asked when the deep answer fails
    (with a request error; a model found unavailable is not asked again in the same ask)."""
    with remembered(tmp_path / "m", server) as mem:
        server.add_rule(role="select", reply={"ids": []})
        server.add_rule(role="deep_answer", fault="400", reply="scripted: bad request")
        server.add_rule(role="light_answer", reply=LIGHT)
        server.add_rule(role="reflect", reply={"complete": True})
        ans = mem.ask(QUESTION, user_id="u", depth="deep")
        assert ans.text == LIGHT["answer"] and ans.fallback == "light" and not ans.complete
        assert ans.evidence and all(h.level == "summary" for h in ans.evidence)


def test_a_prompt_over_the_context_window_falls_back_to_the_light_answer(
    tmp_path: Path, server: SizedLLMServer
) -> None:
    """Before: the server's HTTP 400 "exceeds the available context size" to the deep prompt
    made ask() raise. Light prompts are small; the deep prompt carries raw segments."""
    with remembered(tmp_path / "m", server) as mem:
        server.add_rule(role="light_answer", reply=LIGHT)
        server.add_rule(role="select", reply=lambda body: {"ids": []})
        server.add_size_rule("deep_answer", 1, fault="400", reply=CONTEXT_OVERFLOW)
        server.add_rule(role="reflect", reply={"complete": True})
        ans = mem.ask(QUESTION, user_id="u", depth="auto")
        assert ans.text == LIGHT["answer"] and ans.fallback == "light" and not ans.complete
        assert any("deep_answer" in f for f in ans.fallbacks)
        assert len(server.requests_for("deep_answer")) == 1  # a 400 is not retried


def test_when_every_role_fails_the_extractive_answer_is_not_complete(
    tmp_path: Path, server: SizedLLMServer
) -> None:
    """Before: every model role down made ask() raise; every role answering garbage gave
    "Unable to answer..." with complete=True."""
    with remembered(tmp_path / "m", server) as mem:
        server.add_rule(fault="500")  # every role, every time
        ans = mem.ask(QUESTION, user_id="u", depth="auto")
        assert ans.fallback == "extractive" and ans.complete is False and ans.text.strip()
        # the extractive roles answered from the stored summaries
        stored = [it.text for it in mem.get_all(user_id="u", limit=100).items]
        assert any(ans.text in text for text in stored), (ans.text, stored)
        # the model was asked once, then the rest of the ask skipped it (no deadline each)
        assert len(server.requests_for("select")) == 0
        assert last_trace(mem).fallback == "extractive"
        assert ans.usage.roles["light_answer"].fallbacks == 1  # the fallbacks metric's input


def test_when_every_role_replies_garbage_the_answer_is_not_complete(
    tmp_path: Path, server: SizedLLMServer
) -> None:
    with remembered(tmp_path / "m", server) as mem:
        server.add_rule(fault="empty")  # every role: a reply that never validates
        for depth in ("auto", "deep", "light"):
            ans = mem.ask(QUESTION, user_id="u", depth=depth)  # type: ignore[arg-type]
            assert ans.fallbacks and ans.complete is False, (depth, ans.text)


def test_one_asks_selection_batches_stay_within_the_concurrency(
    tmp_path: Path, server: SizedLLMServer
) -> None:
    """A one-request server is never sent two selection batches at once."""
    with remembered(tmp_path / "m", server, llm_concurrency=1) as mem:
        server.add_rule(role="light_answer", reply=LIGHT)
        server.add_rule(role="select", reply={"ids": []}, delay_s=0.05)
        server.add_rule(role="deep_answer", reply={"answer": "A puppy."})
        server.add_rule(role="reflect", reply={"complete": True})
        server.max_in_flight = 0
        ans = mem.ask(QUESTION, user_id="u", depth="auto", N=12, d=2)
        assert len(server.requests_for("select")) >= 2 and server.max_in_flight == 1
        assert ans.text == "A puppy." and ans.fallback is None and ans.complete


def test_with_ask_fallback_off_the_models_error_is_raised(
    tmp_path: Path, server: SizedLLMServer
) -> None:
    from hymem.core.errors import LLMUnavailable

    with remembered(tmp_path / "m", server, ask_fallback=False) as mem:
        server.add_rule(role="light_answer", reply=LIGHT)
        server.add_rule(role="select", fault="500")
        with pytest.raises(LLMUnavailable, match="select"):
            mem.ask(QUESTION, user_id="u", depth="auto")
        assert last_trace(mem).error.startswith("LLMUnavailable")
