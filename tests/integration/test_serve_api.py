"""The REST server for real: uvicorn on 127.0.0.1 (a random port), driven with httpx. Auth,
cross-tenant attempts with hostile ids in paths and bodies, bad and oversize bodies, a model
backend that is down, and the whole API once end to end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hymem import Memory, MemoryConfig

from tests.doubles import scripted_config
from tests.fixtures_serve import Served, hashing_memory
from tests.fixtures_store import EVIL

pytestmark = pytest.mark.integration

KEYS = f"ka=alice,kb=bob,kteam=team-*,kadmin=*,kevil={EVIL}"
A, B, TEAM, ADMIN = ({"Authorization": f"Bearer {k}"} for k in ("ka", "kb", "kteam", "kadmin"))


def _memory(folder: Path, config: MemoryConfig | None = None) -> Memory:
    return hashing_memory(folder, config)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    srv = Served(_memory(tmp_path / "m"), KEYS, max_body_bytes=64_000)
    try:
        yield srv
    finally:
        srv.stop()


def _seed(http: httpx.Client) -> None:
    for user, key, said in (("alice", A, "I adopted a beagle"), ("bob", B, "I sail on Sundays")):
        body = {"user_id": user, "messages": [{"role": "user", "content": said}]}
        assert http.post("/v1/memories", json=body, headers=key).status_code == 200
        assert http.post("/v1/memories/flush", json={"user_id": user}, headers=key).is_success


def test_the_whole_api_end_to_end(served: Served) -> None:
    http = served.http
    _seed(http)
    assert http.get("/healthz").json()["status"] == "ok"
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/v1/memories", "/v1/search", "/v1/ask", "/v1/users/{user_id}"} <= set(paths)
    page = http.get("/v1/memories", params={"user_id": "alice", "limit": 1}, headers=A).json()
    memory_id = page["items"][0]["id"]
    item = http.get(f"/v1/memories/{memory_id}", params={"user_id": "alice"}, headers=A).json()
    assert "beagle" in item["summary"]["text"] and item["source_turns"]
    new = http.put(
        f"/v1/memories/{memory_id}",
        json={"user_id": "alice", "text": "Alice has a beagle named Rex"},
        headers=A,
    ).json()
    assert new["version"] == 2 and new["origin"] == "user"
    chain = http.get(f"/v1/memories/{new['id']}/history", params={"user_id": "alice"}, headers=A)
    assert [v["status"] for v in chain.json()] == ["superseded", "active"]
    hits = http.post("/v1/search", json={"user_id": "alice", "query": "beagle Rex"}, headers=A)
    assert hits.json()[0]["id"] == new["id"]
    ctx = http.post("/v1/context", json={"user_id": "alice", "question": "dog?"}, headers=A)
    assert ctx.status_code == 200
    ans = http.post(
        "/v1/ask", json={"user_id": "alice", "question": "What is the dog's name?"}, headers=A
    )
    assert ans.status_code == 200 and ans.json()["user_id"] == "alice"
    assert len(http.get("/v1/traces", params={"user_id": "alice"}, headers=A).json()) == 1
    gone = http.delete(f"/v1/memories/{new['id']}", params={"user_id": "alice"}, headers=A).json()
    assert gone["status"] == "deleted"
    assert http.post("/v1/sleep", json={"user_id": "alice"}, headers=A).status_code == 200
    assert http.post("/v1/sleep", json={}, headers=A).status_code == 403  # every user: admin only
    assert http.post("/v1/sleep", json={"dry_run": True}, headers=ADMIN).status_code == 200
    erased = http.delete("/v1/users/alice", headers=A).json()
    assert erased["turns"] == 1
    assert http.get("/v1/memories", params={"user_id": "alice"}, headers=A).json()["items"] == []
    assert http.get("/v1/memories", params={"user_id": "bob"}, headers=B).json()["items"]


def test_no_key_or_a_wrong_key_is_401_and_another_users_key_is_403(served: Served) -> None:
    http = served.http
    _seed(http)
    body = {"user_id": "alice", "query": "beagle"}
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "ka"}):
        res = http.post("/v1/search", json=body, headers=headers)
        assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"
    alice_id = http.get("/v1/memories", params={"user_id": "alice"}, headers=A).json()["items"][0][
        "id"
    ]
    attempts = [
        ("POST", "/v1/search", {"json": body}),
        ("POST", "/v1/ask", {"json": {"user_id": "alice", "question": "q"}}),
        ("POST", "/v1/memories", {"json": {"user_id": "alice", "messages": "hi"}}),
        ("POST", "/v1/memories/flush", {"json": {"user_id": "alice"}}),
        ("GET", "/v1/memories", {"params": {"user_id": "alice"}}),
        ("GET", f"/v1/memories/{alice_id}", {"params": {"user_id": "alice"}}),
        ("PUT", f"/v1/memories/{alice_id}", {"json": {"user_id": "alice", "text": "x"}}),
        ("DELETE", f"/v1/memories/{alice_id}", {"params": {"user_id": "alice"}}),
        ("GET", "/v1/traces", {"params": {"user_id": "alice"}}),
        ("DELETE", "/v1/users/alice", {}),
    ]
    for method, path, kw in attempts:
        res = http.request(method, path, headers=B, **kw)
        assert res.status_code == 403, (method, path, res.text)
        assert "alice" not in res.text and "beagle" not in res.text
    # bob naming alice's record under his own user id: the same 404 as an unknown id
    res = http.get(f"/v1/memories/{alice_id}", params={"user_id": "bob"}, headers=B)
    unknown = http.get("/v1/memories/sum-nope", params={"user_id": "bob"}, headers=B)
    assert res.status_code == unknown.status_code == 404
    assert res.json()["error"] == unknown.json()["error"] == "NotFoundError"
    # a prefix key reaches its users only
    ok = http.post(
        "/v1/memories",
        json={"user_id": "team-7", "messages": [{"role": "user", "content": "hi"}]},
        headers=TEAM,
    )
    assert ok.status_code == 200
    assert http.post("/v1/search", json=body, headers=TEAM).status_code == 403


@pytest.mark.parametrize("hostile", [EVIL, "alice' OR '1'='1", "alice%", "../alice", "*"])
def test_hostile_ids_in_paths_and_bodies_reach_nothing(served: Served, hostile: str) -> None:
    http = served.http
    _seed(http)
    assert (
        http.post("/v1/search", json={"user_id": hostile, "query": "beagle"}, headers=A).status_code
        == 403
    )
    res = http.delete(
        f"/v1/users/{httpx.URL(hostile).path if '/' in hostile else hostile}", headers=A
    )
    assert res.status_code in (403, 404)
    res = http.get(f"/v1/memories/{hostile}", params={"user_id": "alice"}, headers=A)
    assert res.status_code == 404
    # the key bound to the hostile id itself: its own (empty) memory, nobody else's
    evil = {"Authorization": "Bearer kevil"}
    hits = http.post("/v1/search", json={"user_id": EVIL, "query": "beagle sail"}, headers=evil)
    assert hits.status_code == 200 and hits.json() == []
    assert http.get("/v1/memories", params={"user_id": "alice"}, headers=A).json()["items"]


def test_bad_and_oversize_bodies_are_4xx_with_the_reason(served: Served) -> None:
    http = served.http
    cases = [
        ({"content": b"{not json", "headers": {**A, "content-type": "application/json"}}, 422),
        ({"json": {"user_id": "alice", "query": "x", "bogus": 1}, "headers": A}, 422),
        ({"json": {"user_id": "alice", "query": "x", "k": "many"}, "headers": A}, 422),
        ({"json": {"user_id": "alice", "query": "   "}, "headers": A}, 400),
        ({"json": {"user_id": "alice", "query": "x", "k": 0}, "headers": A}, 400),
        ({"json": {"user_id": "alice", "query": "x", "k": 10**9}, "headers": A}, 400),
        ({"json": {"user_id": "alice", "query": "x" * 30_000}, "headers": A}, 400),
    ]
    for kw, status in cases:
        res = http.post("/v1/search", **kw)
        assert res.status_code == status, (kw, res.text)
        assert res.json()["message"]
    big = {"user_id": "alice", "messages": [{"role": "user", "content": "x" * 70_000}]}
    assert http.post("/v1/memories", json=big, headers=A).status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        yield b'{"user_id": "alice", "messages": "'
        for _ in range(100):
            yield b"y" * 1_000
        yield b'"}'

    res = http.post(
        "/v1/memories", content=chunks(), headers={**A, "content-type": "application/json"}
    )
    assert res.status_code == 413
    bad = {"user_id": "alice", "messages": [{"role": "user"}]}
    res = http.post("/v1/memories", json=bad, headers=A)
    assert res.status_code == 400 and res.json()["error"] == "InvalidMessageError"


def test_a_model_backend_that_is_down_is_503_with_retry_after(
    tmp_path: Path, llm_server: Any
) -> None:
    llm_server.add_rule(role="light_answer", fault="500", times=100)
    # ask_fallback off: the model's failure is raised, not answered extractively
    cfg = scripted_config(llm_server, embedder="hashing", ask_fallback=False)
    mem = _memory(tmp_path / "m", cfg)
    srv = Served(mem, KEYS)
    try:
        body = {"user_id": "alice", "messages": [{"role": "user", "content": "I adopted a beagle"}]}
        assert srv.http.post("/v1/memories", json=body, headers=A).status_code == 200
        res = srv.http.post(
            "/v1/ask", json={"user_id": "alice", "question": "my dog?", "depth": "light"}, headers=A
        )
        assert res.status_code == 503 and res.headers["retry-after"] == "5"
        assert res.json()["error"] == "LLMUnavailable" and "light_answer" in res.json()["message"]
        hits = srv.http.post("/v1/search", json={"user_id": "alice", "query": "beagle"}, headers=A)
        assert hits.status_code == 200  # model-free reads keep working
    finally:
        srv.stop()


def test_time_arguments_take_the_librarys_forms_over_http(served: Served) -> None:
    """The server passes every time argument to `Memory`, whose one rule parses it: a date in
    words works as `since` as it does for `as_of`, and a value out of range is a 400."""
    http = served.http
    _seed(http)
    for body in (
        {"since": "8 May 2023", "until": "2999-01-01"},
        {"as_of": "8 May 2999"},
    ):
        found = http.post(
            "/v1/search", json={"user_id": "alice", "query": "beagle", **body}, headers=A
        )
        assert found.status_code == 200 and found.json(), body
    ok = http.get("/v1/traces", params={"user_id": "alice", "since": "8 May 2023"}, headers=A)
    assert ok.status_code == 200
    bad = http.post(
        "/v1/search",
        json={"user_id": "alice", "query": "beagle", "since": "0001-01-01T00:00:00+14:00"},
        headers=A,
    )
    assert bad.status_code == 400 and bad.json()["error"] == "UserInputError"
    assert "since" in bad.json()["message"]


def test_an_agent_keeps_its_memory_id_across_updates_delete_and_restore(served: Served) -> None:
    """Issue 30: an agent that updates a memory and later deletes it by the id it was given
    succeeds (in 0.2 the delete failed: the update had handed out a new id)."""
    http = served.http
    _seed(http)
    hit = http.post("/v1/search", json={"user_id": "alice", "query": "beagle"}, headers=A).json()[0]
    memory_id = hit["memory_id"]
    assert memory_id == hit["id"]  # a first version is its own memory
    body = {"user_id": "alice", "text": "Alice has a beagle named Rex"}
    new = http.put(f"/v1/memories/{memory_id}", json=body, headers=A).json()
    assert new["memory_id"] == memory_id and new["id"] != memory_id
    again = http.put(
        f"/v1/memories/{memory_id}", json={**body, "text": "Rex the beagle"}, headers=A
    )
    assert again.json()["memory_id"] == memory_id and again.json()["version"] == 3
    item = http.get(f"/v1/memories/{memory_id}", params={"user_id": "alice"}, headers=A).json()
    assert item["summary"]["text"] == "Rex the beagle" and len(item["version_ids"]) == 3
    gone = http.delete(f"/v1/memories/{memory_id}", params={"user_id": "alice"}, headers=A)
    assert gone.status_code == 200 and gone.json()["status"] == "deleted"
    chain = http.get(f"/v1/memories/{memory_id}/history", params={"user_id": "alice"}, headers=A)
    assert [v["status"] for v in chain.json()] == [
        "superseded",
        "superseded",
        "superseded",
        "deleted",
    ]
    back = http.post(
        f"/v1/versions/{new['id']}/restore", json={"user_id": "alice"}, headers=A
    ).json()
    assert back["id"] == new["id"] and back["status"] == "active"
    item = http.get(f"/v1/memories/{memory_id}", params={"user_id": "alice"}, headers=A).json()
    assert item["summary"]["text"] == "Alice has a beagle named Rex"
    other = http.post(f"/v1/versions/{new['id']}/restore", json={"user_id": "bob"}, headers=B)
    assert other.status_code == 404


def test_the_profile_over_http(served: Served) -> None:
    http = served.http
    body = {"user_id": "alice", "messages": [{"role": "user", "content": "I live in Lisbon."}]}
    assert http.post("/v1/memories", json=body, headers=A).status_code == 200
    assert http.post("/v1/memories/flush", json={"user_id": "alice"}, headers=A).is_success
    got = http.get("/v1/users/alice/profile", headers=A).json()
    assert got["facts"][0]["fact_key"] == "user|lives_in" and "Lisbon" in got["text"]
    assert http.get("/v1/users/alice/profile", headers=B).status_code == 403
    bad = http.get("/v1/users/alice/profile", params={"max_tokens": 0}, headers=A)
    assert bad.status_code == 400
