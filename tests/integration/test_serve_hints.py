"""Issue 49, item 12: the REST server says why a read found nothing (turns still pending),
answers 503 + Retry-After while the embedder loads instead of holding the request, and
declares in its OpenAPI document the bearer scheme it checks (so /docs can authorise)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder

from tests.fixtures_serve import Served, hashing_memory

pytestmark = pytest.mark.integration

A = {"Authorization": "Bearer ka"}


def test_a_read_before_the_flush_says_how_many_turns_are_pending(tmp_path: Path) -> None:
    srv = Served(hashing_memory(tmp_path / "m"))
    try:
        http = srv.http
        body = {"user_id": "alice", "messages": [{"role": "user", "content": "I adopted a beagle"}]}
        assert http.post("/v1/memories", json=body, headers=A).json()["pending"] == 1
        for path, field in (("/v1/search", "query"), ("/v1/context", "question")):
            found = http.post(path, json={"user_id": "alice", field: "beagle"}, headers=A)
            assert found.status_code == 200 and found.json() == []  # the shape is unchanged
            assert found.headers["X-Hymem-Pending"] == "1", path
            assert "flush" in found.headers["X-Hymem-Hint"]
        asked = http.post("/v1/ask", json={"user_id": "alice", "question": "dog?"}, headers=A)
        assert asked.headers["X-Hymem-Pending"] == "1"
        assert http.post("/v1/memories/flush", json={"user_id": "alice"}, headers=A).is_success
        found = http.post("/v1/search", json={"user_id": "alice", "query": "beagle"}, headers=A)
        assert found.json() and "X-Hymem-Pending" not in found.headers
        nothing = http.post("/v1/search", json={"user_id": "bob", "query": "x"}, headers=A)
        assert nothing.status_code == 403 and "X-Hymem-Pending" not in nothing.headers
    finally:
        srv.stop()


class SlowEmbedder(HashingEmbedder):
    """A hashing embedder whose first embedding waits for `loaded`, like a model loading."""

    def __init__(self) -> None:
        super().__init__(64)
        self.loaded = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        assert self.loaded.wait(30)
        return super().embed(texts)


def test_routes_that_embed_answer_503_with_retry_after_while_the_embedder_loads(
    tmp_path: Path,
) -> None:
    embedder = SlowEmbedder()
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    srv = Served(Memory(tmp_path / "m", config=config, embedder=embedder))
    try:
        http = srv.http
        started = time.monotonic()
        early = http.post("/v1/search", json={"user_id": "alice", "query": "x"}, headers=A)
        assert time.monotonic() - started < 5  # answered, not held for the load
        assert early.status_code == 503 and early.headers["Retry-After"].isdigit()
        assert early.json()["error"] == "NotReady" and "loading" in early.json()["message"]
        assert http.post("/v1/search", json={"user_id": "alice", "query": "x"}).status_code == 401
        listed = http.get("/v1/memories", params={"user_id": "alice"}, headers=A)
        assert listed.status_code == 200  # what needs no embedder is served meanwhile
        assert http.get("/readyz").status_code == 503
        embedder.loaded.set()
        deadline = time.monotonic() + 10
        while http.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        ready = http.post("/v1/search", json={"user_id": "alice", "query": "x"}, headers=A)
        assert ready.status_code == 200
    finally:
        embedder.loaded.set()
        srv.stop()


def test_the_openapi_document_declares_the_bearer_scheme_the_server_checks(
    tmp_path: Path,
) -> None:
    srv = Served(hashing_memory(tmp_path / "m"))
    try:
        doc = srv.http.get("/openapi.json").json()
    finally:
        srv.stop()
    schemes = doc["components"]["securitySchemes"]
    assert schemes == {
        "APIKey": {
            "type": "http",
            "scheme": "bearer",
            "description": schemes["APIKey"]["description"],
        }
    }
    for path, method in (("/v1/search", "post"), ("/v1/memories", "get"), ("/metrics", "get")):
        assert doc["paths"][path][method]["security"] == [{"APIKey": []}], path
    for path in ("/healthz", "/readyz"):
        assert "security" not in doc["paths"][path]["get"], path
