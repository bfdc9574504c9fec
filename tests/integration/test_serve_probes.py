"""Issue #33, part 4: `/healthz` answers whenever the process does; `/readyz` is 503 with each
failing check's reason while the embedder loads, while the configured model server is down, and
once the store is closed, and 200 when all is well. Probes need no key and name no secret."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.ops.readiness import ModelProbe

from tests.doubles import scripted_config
from tests.fixtures_serve import Served, hashing_memory
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration


class GatedEmbedder(HashingEmbedder):
    """A hashing embedder whose first load waits for `loaded`: a model still loading."""

    def __init__(self) -> None:
        super().__init__(64)
        self.name = "gated-64"
        self.loaded = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.loaded.wait(30)
        return super().embed(texts)


def ready_within(http: httpx.Client, seconds: float) -> httpx.Response:
    deadline = time.monotonic() + seconds
    while True:
        r = http.get("/readyz")
        if r.status_code == 200 or time.monotonic() > deadline:
            return r
        time.sleep(0.02)


def assert_not_ready(r: httpx.Response, check: str, reason: str) -> dict[str, Any]:
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["error"] == "NotReady" and body["ready"] is False
    assert body["checks"][check] == {"ok": False, "detail": body["checks"][check]["detail"]}
    assert reason in body["checks"][check]["detail"] and reason in body["message"]
    return body


def test_not_ready_while_the_embedder_loads_then_ready(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    srv = Served(Memory(tmp_path / "m", config=config, embedder=embedder))
    try:
        assert srv.http.get("/healthz").json()["status"] == "ok"  # alive all along
        body = assert_not_ready(srv.http.get("/readyz"), "embedder", "gated-64 is loading")
        assert body["checks"]["store"]["ok"] and body["checks"]["model"]["ok"]
        embedder.loaded.set()
        r = ready_within(srv.http, 10)
        assert r.status_code == 200, r.text
        assert r.json()["ready"] is True
        assert set(r.json()["checks"]) == {"store", "journal", "embedder", "model"}
    finally:
        embedder.loaded.set()
        srv.stop()


def test_not_ready_while_the_model_server_is_down(tmp_path: Path) -> None:
    llm = ScriptedLLMServer().start()
    config = scripted_config(llm, embedder="hashing", llm_api_key="sk-probe-secret")
    memory = Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64))
    srv = Served(memory)
    readiness = srv.server.config.app.state.hymem_readiness
    readiness.model_probe = ModelProbe(memory.config, ttl_s=0, timeout_s=1)
    try:
        r = ready_within(srv.http, 10)
        assert r.status_code == 200, r.text  # the scripted server answers (501: no /models)
        port = llm.base_url.split(":")[-1].split("/")[0]
        llm.stop()
        r = srv.http.get("/readyz")
        body = assert_not_ready(r, "model", "the model server did not answer")
        assert all(c["ok"] for name, c in body["checks"].items() if name != "model")
        assert "sk-probe-secret" not in r.text and port not in r.text
    finally:
        llm.stop()
        srv.stop()


def test_not_ready_once_the_store_is_closed(tmp_path: Path) -> None:
    memory = hashing_memory(tmp_path / "m")
    srv = Served(memory)
    try:
        assert ready_within(srv.http, 10).status_code == 200
        memory.close()
        assert_not_ready(srv.http.get("/readyz"), "store", "the store is closed")
    finally:
        srv.stop()
