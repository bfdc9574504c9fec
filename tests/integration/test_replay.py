"""Replaying a past ask (real LanceDB + Tantivy): the records it read come back as they were
after an update and a delete, the question is asked again with the recorded depth, sizes and
filter against today's memory, and `hymem replay` shows both sides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app
from hymem.core.errors import NotFoundError, UserInputError
from hymem.embed.embedders import HashingEmbedder
from typer.testing import CliRunner

from tests.fixtures_reader import pick_where

pytestmark = pytest.mark.integration

FACTS = [
    "I adopted a beagle named Biscuit last week",
    "My sister Maria lives in Porto",
    "I am training for the Lisbon half marathon",
]


def _open(folder: Path) -> Memory:
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    return Memory(folder, config=config, embedder=HashingEmbedder())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "m"
    with _open(folder) as mem:
        for i, said in enumerate(FACTS):
            mem.add(
                [{"speaker": "Ann", "text": said}, {"speaker": "Bo", "text": "Nice!"}],
                user_id="ann",
                session_id=f"s{i}",
                timestamp=f"2023-05-0{i + 1}T10:00",
            )
        mem.flush(user_id="ann")
    return folder


def test_replay_reads_the_past_versions_and_asks_again(folder: Path) -> None:
    with _open(folder) as mem:
        past = mem.ask("What is the name of Ann's beagle?", user_id="ann", depth="light", k=2)
        read = {h.id: h.text for h in past.evidence}
        beagle = next(i for i, t in read.items() if "Biscuit" in t)
        other = next(i for i in read if i != beagle)
        mem.update(beagle, "Ann's beagle is called Pretzel now", user_id="ann")
        mem.delete(other, user_id="ann")

        replay = mem.replay(past.trace_id, user_id="ann")

        then = {r.id: r for r in replay.then.summaries}
        assert set(then) == set(read)  # exactly what the past ask read, by id
        assert then[beagle].text == read[beagle]  # as it was, not as it is
        assert then[beagle].status_now == "superseded" and then[beagle].superseded_by
        assert then[other].status_now == "superseded"  # a delete retires it behind a tombstone
        assert replay.then.answer == past.text and replay.then.trace_id == past.trace_id
        # today's ask reads the new version, with the recorded depth and k
        now_texts = [r.text or "" for r in replay.now.summaries]
        assert len(replay.now.summaries) <= 2 and replay.now.path == "light"
        assert any("Pretzel" in t for t in now_texts)
        assert all(r.status_now == "active" for r in replay.now.summaries)
        assert beagle in replay.no_longer_read and replay.newly_read
        assert replay.now.trace_id != past.trace_id  # the replay's own ask left its trace
        assert {t.trace_id for t in mem.traces(user_id="ann")} >= {
            past.trace_id,
            replay.now.trace_id,
        }


def test_replay_refuses_unknown_and_other_users_traces(folder: Path) -> None:
    with _open(folder) as mem:
        past = mem.ask("Where does Maria live?", user_id="ann", depth="light")
        with pytest.raises(NotFoundError):
            mem.replay(past.trace_id, user_id="bob")  # isolation: ann's trace is not bob's
        with pytest.raises(NotFoundError):
            mem.replay("0" * 32, user_id="ann")
        with pytest.raises(UserInputError):
            mem.replay("", user_id="ann")


def test_replay_asks_with_the_recorded_sizes(scripted_memory: Any, llm_server: Any) -> None:
    llm_server.add_rule(role="light_answer", reply={"answer": "", "complete": False})
    llm_server.add_rule(role="select", reply=pick_where("sunrise", "pottery"))
    llm_server.add_rule(role="deep_answer", reply={"answer": "a sunrise and a bowl"})
    past = scripted_memory.ask(
        "What did Melanie paint?", user_id="alice", N=20, d=5, max_iterations=0
    )
    calls = [role for role, _ in llm_server.requests]
    assert calls.count("select") == 4
    replay = scripted_memory.replay(past.trace_id, user_id="alice")
    again = [role for role, _ in llm_server.requests][len(calls) :]
    assert again == calls  # N=20 in batches of 5, no reflection: the same calls again
    assert [r.id for r in replay.now.segments] == [r.id for r in replay.then.segments]
    assert replay.same_answer and replay.then.escalated and replay.now.escalated


def test_cli_replay_shows_then_and_now(folder: Path) -> None:
    with _open(folder) as mem:
        past = mem.ask("What is the name of Ann's beagle?", user_id="ann", depth="light", k=2)
    result = CliRunner().invoke(
        app,
        ["replay", past.trace_id, "--user", "ann", "--store", str(folder), "--embedder", "hashing"],
    )
    assert result.exit_code == 0, result.output
    assert "then" in result.output and "now" in result.output
    assert "Biscuit" in result.output
    missing = CliRunner().invoke(
        app, ["replay", "f" * 32, "--user", "ann", "--store", str(folder), "--embedder", "hashing"]
    )
    assert isinstance(missing.exception, NotFoundError)


def test_replay_over_rest_with_the_python_client(folder: Path) -> None:
    from hymem.client import Client

    from tests.fixtures_serve import Served

    server = Served(_open(folder))
    try:
        with Client(server.url, "kadmin") as client:
            past = client.ask("Where does Maria live?", user_id="ann", depth="light")
            replay = client.replay(past.trace_id, user_id="ann")
            assert replay.then.trace_id == past.trace_id and replay.same_answer
            assert {r.id for r in replay.then.summaries} == {
                h.id for h in past.evidence if h.level == "summary"
            }
        with Client(server.url, "ka") as alice, pytest.raises(Exception) as denied:
            alice.replay(past.trace_id, user_id="ann")  # alice's key may not act for ann
        assert type(denied.value).__name__ == "AuthError"
    finally:
        server.stop()
