"""`hymem serve` as a real process: a SIGKILL loses no acknowledged write, and SIGTERM finishes
what is in flight and closes the store cleanly (no journal, the writer lock released)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = {"Authorization": "Bearer k-alice"}


def _start(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYMEM_API_KEYS": "k-alice=alice"}
    cmd = [sys.executable, "-m", "hymem.cli", "serve", "--store", str(folder), "--port", str(port)]
    cmd += ["--llm", "extractive", "--embedder", "hashing:64"]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(proc.stderr.read().decode()[-2000:] if proc.stderr else "no start")


def _reopen(folder: Path) -> Memory:
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing:64")
    return Memory(folder, config=config, embedder=HashingEmbedder(64))


def _writer(url: str, acked: list[str], stop: threading.Event, tag: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as http:
        n = 0
        while not stop.is_set():
            body = {
                "user_id": "alice",
                "session_id": tag,
                "messages": [{"role": "user", "content": f"{tag} message {n} about the garden"}],
            }
            try:
                res = http.post("/v1/memories", json=body, headers=KEY)
            except httpx.TransportError:
                return  # the server died: this write was never acknowledged
            if res.status_code == 200:
                acked.extend(res.json()["new_turn_ids"])
            n += 1


def test_a_sigkilled_server_loses_no_acknowledged_write(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    proc, url = _start(folder)
    acked: list[str] = []
    stop = threading.Event()
    writers = [threading.Thread(target=_writer, args=(url, acked, stop, f"w{i}")) for i in range(4)]
    for w in writers:
        w.start()
    while len(acked) < 40:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    stop.set()
    for w in writers:
        w.join(30)
    with _reopen(folder) as mem:
        stored = {t.id for t in mem.get_all(user_id="alice", level="turn", limit=1000).items}
        assert set(acked) <= stored, f"lost {len(set(acked) - stored)} of {len(acked)}"
        mem.flush(user_id="alice")  # and the store works on
        assert mem.stats(user_id="alice")["pending_turns"] == 0


def test_sigterm_finishes_in_flight_work_and_closes_cleanly(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    proc, url = _start(folder)
    with httpx.Client(base_url=url, timeout=30) as http:
        for i in range(30):
            body = {"user_id": "alice", "messages": [{"role": "user", "content": f"fact {i}"}]}
            assert http.post("/v1/memories", json=body, headers=KEY).status_code == 200
        done: dict[str, int] = {}
        flush = threading.Thread(
            target=lambda: done.update(
                status=http.post(
                    "/v1/memories/flush", json={"user_id": "alice"}, headers=KEY
                ).status_code
            )
        )
        flush.start()
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        flush.join(60)
    # uvicorn re-raises the signal once it has shut down, so the exit status is SIGTERM's
    assert proc.wait(60) in (0, -signal.SIGTERM)
    assert done.get("status") == 200  # the request in flight was answered before the exit
    assert not (folder / "journal.json").exists()
    with _reopen(folder) as mem:  # the writer lock was released
        assert mem.stats(user_id="alice")["turns"] == 30
