"""`hymem.client` against the real server (uvicorn on 127.0.0.1, `tests/fixtures_serve.py`).

The same scenario runs on `Memory(path)` and on `Client(url, key)` and must give the same ids
and texts: moving from embedded to served is one changed line. Then the same for asyncio
(`AsyncMemory` and `AsyncClient`, with many calls in flight at once), the typed errors a caller
meets only when served, and a model backend that is down (503, retried, then LLMUnavailable)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
from hymem import AsyncMemory, Memory, MemoryConfig
from hymem.client import AsyncClient, Client
from hymem.core import errors as E
from hymem.embed.embedders import HashingEmbedder

from tests.doubles import scripted_config
from tests.fixtures_serve import Served, hashing_memory
from tests.log_events import capture_events

pytestmark = pytest.mark.integration

T1, T2 = "2024-03-01T09:00:00", "2024-03-02T18:30:00"


def _all_pages(mem: Any, **kw: Any) -> list[Any]:
    """Every record, one small page at a time (the cursor round-trips through the server)."""
    page = mem.get_all(user_id="alice", limit=1, **kw)
    items = list(page.items)
    while page.next_cursor:
        page = mem.get_all(user_id="alice", limit=1, cursor=page.next_cursor, **kw)
        items += page.items
    return items


def scenario(mem: Memory | Client) -> dict[str, Any]:
    """The whole API once; written against `Memory`, run unchanged against `Client`."""
    said = mem.add("I adopted a beagle named Rex", user_id="alice", session_id="s1", timestamp=T1)
    messages = [
        {"role": "user", "content": "I sail on Sundays with my sister Maya"},
        {"role": "assistant", "content": "That sounds lovely."},
    ]
    listed = mem.add(messages, user_id="alice", session_id="s2", timestamp=T2)
    flushed = mem.flush(user_id="alice")
    turns = _all_pages(mem, level="turn")
    summaries = _all_pages(mem)
    beagle = next(s for s in summaries if "beagle" in s.text)
    item = mem.get(beagle.id, user_id="alice")
    new = mem.update(beagle.id, "Alice has a beagle called Rex", user_id="alice")
    chain = mem.history(new.id, user_id="alice")
    hits = mem.search("beagle Rex", user_id="alice", k=3)
    answer = mem.ask("What is my dog called?", user_id="alice", depth="light")
    context = mem.context("Who do I sail with?", user_id="alice")
    deleted = mem.delete(new.id, user_id="alice")
    traces = mem.traces(user_id="alice")
    slept = mem.sleep(user_id="alice")
    erased = mem.erase_user("alice")
    return {
        "turn_ids": said.turn_ids + listed.turn_ids,
        "summaries_written": said.summaries_written
        + listed.summaries_written
        + flushed.summaries_written,
        "turns": [(t.id, t.text, t.session_id) for t in turns],
        "summaries": [(s.id, s.text) for s in summaries],
        "item": (item.summary.id, item.version_ids, [t.id for t in item.source_turns]),
        "new": (new.text, new.version, new.previous_id),
        "chain": [(v.id, v.status) for v in chain],
        "hits": [(h.id, h.text) for h in hits],
        "answer": (answer.text, answer.path, [h.id for h in answer.evidence]),
        "context": [h.id for h in context],
        "deleted": (deleted.status, deleted.previous_id),
        "traces": [(t.question, t.path, t.answer) for t in traces],
        "slept": (slept.users, slept.dry_run),
        "erased": (erased.turns, erased.segments, erased.summaries, erased.traces),
    }


def test_one_changed_line_moves_the_code_from_embedded_to_served(
    tmp_path: Path, rest_server: Served
) -> None:
    with hashing_memory(tmp_path / "embedded") as mem:
        embedded = scenario(mem)
    with Client(rest_server.url, "ka") as mem:  # the one changed line
        served = scenario(mem)
    assert served == embedded
    assert len(embedded["turns"]) == 3 and len(embedded["summaries"]) >= 2  # paged one by one
    assert [s for _, s in embedded["chain"]] == ["superseded", "active"]
    assert "Rex" in embedded["answer"][0] and embedded["erased"][0] == 3


def test_types_are_the_librarys_own(rest_server: Served) -> None:
    import hymem

    with Client(rest_server.url, "ka") as mem:
        assert isinstance(mem.add("I adopted a beagle", user_id="alice"), hymem.AddResult)
        assert isinstance(mem.flush(user_id="alice"), hymem.AddResult)
        page = mem.get_all(user_id="alice", level="segment")
        assert isinstance(page, hymem.Page) and page.items
        assert type(page.items[0]).__name__ == "SegmentRecord"
        assert all(isinstance(h, hymem.Hit) for h in mem.search("beagle", user_id="alice"))
        assert isinstance(mem.ask("dog?", user_id="alice", depth="light"), hymem.Answer)
        assert all(isinstance(t, hymem.Trace) for t in mem.traces(user_id="alice"))
        assert isinstance(mem.sleep(user_id="alice", dry_run=True), hymem.SleepReport)
        assert mem.health() == {"status": "ok", "read_only": False}
    with Client(rest_server.url, "kadmin") as admin:
        assert isinstance(admin.sleep(), hymem.SleepReport)  # every user: the admin key only
        assert isinstance(admin.erase_user("alice"), hymem.ErasureReport)


def test_errors_are_the_same_classes_as_embedded(rest_server: Served) -> None:
    with Client(rest_server.url, "ka") as alice, Client(rest_server.url, "kb") as bob:
        bob.add("I sail on Sundays", user_id="bob")
        bob.flush(user_id="bob")
        bobs = bob.get_all(user_id="bob").items[0].id
        for unknown in ("sum-nope", bobs):  # another user's id is not found, like a wrong one
            with pytest.raises(E.NotFoundError) as caught:
                alice.get(unknown, user_id="alice")
            assert caught.value.record_id == unknown
            with pytest.raises(E.NotFoundError):
                alice.update(unknown, "mine now", user_id="alice")
        with pytest.raises(E.AuthError) as denied:  # alice's key, bob's memory
            alice.search("sail", user_id="bob")
        assert denied.value.status_code == 403
        with pytest.raises(E.UserInputError):
            alice.search("   ", user_id="alice")
        with pytest.raises(E.UserInputError, match="user_id"):
            alice.traces()  # served, traces name their user
        with pytest.raises(E.AuthError):
            alice.sleep()  # every user at once takes the admin key
    with Client(rest_server.url) as anonymous, pytest.raises(E.AuthError) as missing:
        anonymous.flush(user_id="alice")
    assert missing.value.status_code == 401
    with Client(rest_server.url + "/elsewhere", "ka") as lost, pytest.raises(E.HymemError) as c:
        lost.get("sum-1", user_id="alice")
    assert type(c.value) is E.HymemError and "base_url" in str(c.value)


def test_a_server_that_is_not_there_is_server_unavailable() -> None:
    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Client(f"http://127.0.0.1:{port}", "ka") as mem, pytest.raises(E.ServerUnavailable):
        mem.search("anything", user_id="alice")
    with pytest.raises(E.StoreError):  # caught by what catches an unusable store embedded
        asyncio.run(_async_search(f"http://127.0.0.1:{port}"))


async def _async_search(url: str) -> None:
    async with AsyncClient(url, "ka") as mem:
        await mem.search("anything", user_id="alice")


async def async_scenario(mem: AsyncMemory | AsyncClient) -> dict[str, Any]:
    """20 adds and 20 searches in flight at once, then the rest of the API once."""
    seeded = await mem.add("I adopted a beagle named Rex", user_id="alice", timestamp=T1)
    await mem.flush(user_id="alice")
    adds = [
        mem.add(f"Fact number {n} about sailing", user_id="alice", session_id=f"s{n}", timestamp=T2)
        for n in range(20)
    ]
    searches = [mem.search("beagle", user_id="alice", k=2) for _ in range(20)]
    results = await asyncio.gather(*adds, *searches)
    added, found = results[:20], results[20:]
    await mem.flush(user_id="alice")
    page = await mem.get_all(user_id="alice", level="turn", limit=1000)
    summaries = (await mem.get_all(user_id="alice")).items
    first = summaries[0].id
    new = await mem.update(first, "Alice has a beagle called Rex", user_id="alice")
    chain = await mem.history(new.id, user_id="alice")
    item = await mem.get(new.id, user_id="alice")
    answer, context = await asyncio.gather(
        mem.ask("What is my dog called?", user_id="alice", depth="light"),
        # a query with a match: for one with none, ties among the 20 alike sailing facts
        # fall to ids, which the order of the concurrent adds decides
        mem.context("beagle", user_id="alice"),
    )
    deleted = await mem.delete(new.id, user_id="alice")
    traces = await mem.traces(user_id="alice")
    slept = await mem.sleep(user_id="alice")
    erased = await mem.erase_user("alice")
    # Turn ids hash their sequence number, which the order of concurrent adds decides: compare
    # what does not depend on that order.
    return {
        "seeded": seeded.turn_ids,
        "added": sorted(len(r.turn_ids) for r in added),
        "found": {hits[0].id for hits in found},
        "turns": sorted(t.text for t in page.items),
        "chain": [v.status for v in chain],
        "item": item.summary.text,
        "answer": answer.text,
        "context": context[0].text if context else None,
        "deleted": deleted.status,
        "traces": len(traces),
        "slept": slept.users,
        "erased": erased.turns,
    }


def test_async_client_many_calls_in_flight_same_as_async_memory(
    tmp_path: Path, rest_server: Served
) -> None:
    async def embedded() -> dict[str, Any]:
        config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
        async with AsyncMemory(tmp_path / "e", config=config, embedder=HashingEmbedder(64)) as m:
            return await async_scenario(m)

    async def served() -> dict[str, Any]:
        async with AsyncClient(rest_server.url, "ka") as mem:  # the one changed line
            return await async_scenario(mem)

    ours, theirs = asyncio.run(served()), asyncio.run(embedded())
    assert ours == theirs
    assert ours["added"] == [1] * 20 and len(ours["turns"]) == 21 and len(ours["found"]) == 1
    assert ours["erased"] == 21


def test_a_model_backend_that_is_down_is_retried_then_llm_unavailable(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.add_rule(role="light_answer", fault="500", times=100)
    # ask_fallback off: the model's failure is raised, not answered extractively
    cfg = scripted_config(llm_server, embedder="hashing", ask_fallback=False)
    srv = Served(hashing_memory(tmp_path / "m", cfg))
    try:
        with Client(srv.url, "ka", retries=2, max_retry_wait=0.01) as mem:
            mem.add("I adopted a beagle", user_id="alice")
            with pytest.raises(E.LLMUnavailable) as caught:
                mem.ask("my dog?", user_id="alice", depth="light")
            assert caught.value.role == "light_answer"
            assert mem.search("beagle", user_id="alice") is not None  # model-free reads work
    finally:
        srv.stop()


def test_an_empty_read_with_pending_turns_warns_as_memory_does(rest_server: Served) -> None:
    """The server's `X-Hymem-Pending` header becomes the library's own warning (issue 49)."""
    with Client(rest_server.url, "ka") as mem:
        mem.add("I adopted a beagle", user_id="alice")
        with capture_events() as events:
            assert mem.search("beagle", user_id="alice") == []
        # the client's own warning (the server, in this process, logs one with the user_id)
        warned = [
            e
            for e in events
            if e["event"] == "memory.pending_not_searchable" and "user_id" not in e
        ]
        assert warned and warned[0]["pending"] == 1 and warned[0]["call"] == "search"
        mem.flush(user_id="alice")
        with capture_events() as events:
            assert mem.search("beagle", user_id="alice")
        assert not [e for e in events if e["event"] == "memory.pending_not_searchable"]
