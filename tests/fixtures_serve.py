"""The REST server for real, in this process: `create_app` on uvicorn, bound to 127.0.0.1 on a
free port taken before the server starts (so two tests never race for one), served from a
thread. Over a Memory with the extractive backend and the hashing embedder unless a test brings
its own."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.serve.app import create_app
from hymem.serve.auth import KeyRing

# alice's key, bob's key, an admin key (every user); the plain HYMEM_API_KEYS format.
SERVE_KEYS = "ka=alice,kb=bob,kadmin=*"


def hashing_memory(folder: Path, config: MemoryConfig | None = None) -> Memory:
    config = config or MemoryConfig.defaults(llm="extractive", embedder="hashing")
    return Memory(folder, config=config, embedder=HashingEmbedder(64))


class Served:
    """One running server around `memory`; `url` to reach it, `http` a plain httpx client.
    `stop()` shuts uvicorn down the way SIGTERM would, which closes the Memory."""

    def __init__(self, memory: Memory, keys: str = SERVE_KEYS, **app_options: Any) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = create_app(memory, KeyRing.from_env(keys), **app_options)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]})
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def stop(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def rest_server(tmp_path: Path) -> Iterator[Served]:
    """A server over a fresh hashing-embedder Memory, keys `SERVE_KEYS`."""
    srv = Served(hashing_memory(tmp_path / "served"))
    try:
        yield srv
    finally:
        srv.stop()
