"""An add() is recognised as a retry by its request identity, never by equal text: the same
words said twice are two turns; the same request sent again (`request_id=`, or the REST
`Idempotency-Key` header) is stored once, after a flush and after a restart too; a request id
reused for other messages is refused. On real LanceDB and Tantivy, and a real REST listener on
127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem import AsyncMemory, Memory, MemoryConfig
from hymem.client import Client
from hymem.core.errors import UserInputError
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

from tests.fixtures_serve import Served, hashing_memory

pytestmark = pytest.mark.integration

EXCHANGE = [
    {"role": "user", "content": "Thanks!"},
    {"role": "assistant", "content": "You're welcome."},
]
A = {"Authorization": "Bearer ka"}


def _memory(folder: Path, **config: Any) -> Memory:
    cfg = MemoryConfig.defaults(llm="extractive", embedder="hashing", **config)
    return Memory(folder, config=cfg, embedder=HashingEmbedder(64))


def _texts(mem: Memory, user: str = "alice") -> list[str]:
    return [t.text for t in store_of(mem).get_turns(user)]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    srv = Served(hashing_memory(tmp_path / "served"))
    try:
        yield srv
    finally:
        srv.stop()


def test_the_same_words_twice_are_two_turns(tmp_path: Path) -> None:
    """Before: the second add, equal to the first within retry_window_s, stored nothing."""
    with _memory(tmp_path / "m") as mem:
        first = mem.add(EXCHANGE, user_id="alice", session_id="s")
        again = mem.add(EXCHANGE, user_id="alice", session_id="s")
        assert again.new_turn_ids and set(again.turn_ids).isdisjoint(first.turn_ids)
        assert _texts(mem) == ["Thanks!", "You're welcome."] * 2


def test_a_request_sent_again_is_stored_once_even_after_a_flush_and_a_restart(
    tmp_path: Path,
) -> None:
    with _memory(tmp_path / "m") as mem:
        first = mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="req-1")
        assert first.new_turn_ids == first.turn_ids
        mem.add("Something else.", user_id="alice", session_id="s", request_id="req-2")
        mem.flush(user_id="alice")
        again = mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="req-1")
        assert again.turn_ids == first.turn_ids and again.new_turn_ids == []
        repeat = mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="req-3")
        assert repeat.new_turn_ids and len(repeat.turn_ids) == 2  # a new request: said again
    with _memory(tmp_path / "m") as mem:
        after = mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="req-1")
        assert after.turn_ids == first.turn_ids and after.new_turn_ids == []
        assert _texts(mem) == [
            "Thanks!",
            "You're welcome.",
            "Something else.",
            "Thanks!",
            "You're welcome.",
        ]
        other = mem.add(EXCHANGE, user_id="bob", session_id="s", request_id="req-1")
        assert other.new_turn_ids and _texts(mem, "bob") == ["Thanks!", "You're welcome."]


def test_messages_with_their_own_ids_keep_them_inside_a_request(tmp_path: Path) -> None:
    mixed = [
        {"id": "m-1", "role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello."},
    ]
    with _memory(tmp_path / "m") as mem:
        first = mem.add(mixed, user_id="alice", request_id="req-1")
        assert first.turn_ids[0] == "m-1"
        again = mem.add(mixed, user_id="alice", request_id="req-1")
        assert again.turn_ids == first.turn_ids and again.new_turn_ids == []
        assert _texts(mem) == ["Hi.", "Hello."]


@pytest.mark.parametrize(
    "changed",
    [
        {"messages": [{"role": "user", "content": "Thanks!"}]},  # fewer messages, then more
        {"messages": [*EXCHANGE, {"role": "user", "content": "Bye."}]},
        {"messages": [EXCHANGE[0], {"role": "assistant", "content": "No problem."}]},
        {"session_id": "other"},
        {"metadata": {"topic": "x"}},
    ],
)
def test_a_request_id_reused_for_other_messages_is_refused(
    tmp_path: Path, changed: dict[str, Any]
) -> None:
    call: dict[str, Any] = {"messages": EXCHANGE, "session_id": "s", **changed}
    with _memory(tmp_path / "m") as mem:
        if len(call["messages"]) < len(EXCHANGE):  # the shorter call first, the longer reuses
            mem.add(call.pop("messages"), user_id="alice", session_id="s", request_id="r")
            call["messages"] = EXCHANGE
        else:
            mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="r")
        before = _texts(mem)
        with pytest.raises(UserInputError, match="request_id 'r' was already used"):
            mem.add(call.pop("messages"), user_id="alice", request_id="r", **call)
        assert _texts(mem) == before  # nothing written


@pytest.mark.parametrize("bad", ["", "   ", 5, "x" * 300, "a\x00b", "\ud800"])
def test_a_bad_request_id_is_refused_before_anything_is_written(tmp_path: Path, bad: Any) -> None:
    with _memory(tmp_path / "m") as mem:
        with pytest.raises(UserInputError, match="request_id"):
            mem.add(EXCHANGE, user_id="alice", request_id=bad)
        assert _texts(mem) == []


def test_the_opt_in_equal_text_window_never_overrides_a_request_id(tmp_path: Path) -> None:
    """retry_window_s > 0 brings back the equal-text guess for calls that name nothing; a call
    that names its request is judged by the id alone."""
    with _memory(tmp_path / "m", retry_window_s=600) as mem:
        mem.add(EXCHANGE, user_id="alice", session_id="s")
        assert mem.add(EXCHANGE, user_id="alice", session_id="s").new_turn_ids == []
        mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="r1")
        assert mem.add(EXCHANGE, user_id="alice", session_id="s", request_id="r2").new_turn_ids
        assert len(_texts(mem)) == 6


def test_async_memory_takes_the_request_id(tmp_path: Path) -> None:
    async def run() -> list[Any]:
        cfg = MemoryConfig.defaults(llm="extractive", embedder="hashing")
        async with AsyncMemory(tmp_path / "m", config=cfg, embedder=HashingEmbedder(64)) as mem:
            first = await mem.add(EXCHANGE, user_id="alice", request_id="r")
            again = await mem.add(EXCHANGE, user_id="alice", request_id="r")
            return [first.turn_ids, again.turn_ids, again.new_turn_ids]

    first, again, new = asyncio.run(run())
    assert again == first and new == []


def test_rest_idempotency_key_and_request_id_name_the_request(served: Served) -> None:
    http = served.http
    body = {"user_id": "alice", "messages": EXCHANGE}
    keyed = {**A, "Idempotency-Key": "k-1"}
    first = http.post("/v1/memories", json=body, headers=keyed)
    again = http.post("/v1/memories", json=body, headers=keyed)
    assert first.status_code == again.status_code == 200
    assert again.json()["turn_ids"] == first.json()["turn_ids"]
    assert again.json()["new_turn_ids"] == []
    same = http.post("/v1/memories", json={**body, "request_id": "k-1"}, headers=keyed)
    assert same.status_code == 200 and same.json()["new_turn_ids"] == []
    clash = http.post("/v1/memories", json={**body, "request_id": "k-2"}, headers=keyed)
    assert clash.status_code == 400 and "Idempotency-Key" in clash.json()["message"]
    reused = http.post("/v1/memories", json={**body, "messages": "Other words."}, headers=keyed)
    assert reused.status_code == 400 and "already used" in reused.json()["message"]
    unnamed = [http.post("/v1/memories", json=body, headers=A) for _ in range(2)]
    assert all(r.json()["new_turn_ids"] for r in unnamed)  # said twice: stored twice
    with Client(served.url, api_key="ka") as client:
        one = client.add(EXCHANGE, user_id="alice", request_id="c-1")
        two = client.add(EXCHANGE, user_id="alice", request_id="c-1")
        page = client.get_all(user_id="alice", level="turn", status="all", limit=1000)
    assert two.turn_ids == one.turn_ids and two.new_turn_ids == []
    assert len(page.items) == 8  # k-1, two unnamed calls and c-1: two turns each
