"""Webhooks against a real local receiver: it fails, then hangs past the timeout, then recovers,
and every event arrives signed, with one webhook-id across its retries; writes are not slowed
meanwhile; a writer SIGKILLed between its commit and the delivery delivers after a restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app
from hymem.core.errors import ConfigError
from hymem.ops.webhooks import verify
from hymem.ops.webhooks.outbox import Outbox
from typer.testing import CliRunner

from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.integration

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
LOCAL = {"allow_private_targets": True}  # the receivers listen on 127.0.0.1
TURNS = [
    {"speaker": "Ann", "text": "I moved to Lisbon in March for the new job."},
    {"speaker": "Bo", "text": "Nice! How is Lisbon treating you so far?"},
]


def config(url: str, **overrides: Any) -> MemoryConfig:
    values: dict[str, Any] = {
        "embedder": "hashing",
        "webhooks": [{"url": url, "secret": SECRET, "name": "rx", **LOCAL}],
        "webhook_timeout_s": 0.5,
        "webhook_backoff_s": 0.05,
        "webhook_backoff_max_s": 0.2,
        "webhook_max_attempts": 100,
        **overrides,
    }
    return MemoryConfig.defaults(**values)


def commit(mem: Memory, user: str) -> list[str]:
    mem.add(TURNS, user_id=user, session_id="s1", timestamp="2025-03-02T10:00:00")
    return mem.flush(user_id=user).segments_written


def wait_until(check: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_failing_then_hanging_receiver_gets_every_event_once_it_recovers(
    tmp_path: Path,
) -> None:
    with Receiver(mode="fail", hang_s=5.0) as rx:
        mem = Memory(tmp_path / "m", config=config(rx.url, webhook_timeout_s=1.5))
        first = commit(mem, "ann")
        wait_until(lambda: sum(r.status == 500 for r in rx.received) >= 2)  # retried
        rx.mode = "hang"
        wait_until(lambda: any(r.status == 0 for r in rx.received))  # an attempt hangs now
        started = time.perf_counter()
        second = commit(mem, "bo")  # while a delivery attempt waits on the receiver
        write_s = time.perf_counter() - started
        assert write_s < 1.0, f"a write waited on delivery: {write_s:.2f}s"
        rx.mode = "ok"
        got = rx.wait_for(2)
        stopping = time.perf_counter()
        mem.close()
        assert time.perf_counter() - stopping < 3.0
        assert not [t for t in threading.enumerate() if t.name.startswith("hymem-webhook")]

    bodies = {verify(SECRET, r.headers, r.body): json.loads(r.body) for r in got}
    assert sorted(b["data"]["segment_ids"][0] for b in bodies.values()) == sorted(
        [first[0], second[0]]
    )
    assert {b["type"] for b in bodies.values()} == {"turns.committed"}
    first_id = next(i for i, b in bodies.items() if b["user_id"] == "ann")
    tries = [r for r in rx.received if r.headers["webhook-id"] == first_id]
    assert {r.status for r in tries} >= {500, 0, 204}  # failed, timed out, delivered
    assert len({r.body for r in tries}) == 1  # the same body and id on every retry
    box = Outbox(tmp_path / "m" / "webhooks" / "outbox.sqlite3")
    assert {r["state"] for r in box.rows()} == {"delivered"}
    box.close()


def test_edits_and_erasure_reach_endpoints_filtered_by_event_type(tmp_path: Path) -> None:
    with Receiver() as rx, Receiver() as erasures:
        hooks = [
            {"url": rx.url, "secret": SECRET, **LOCAL},
            {"url": erasures.url, "secret": SECRET, "events": ["user.erased"], **LOCAL},
        ]
        with Memory(tmp_path / "m", config=config(rx.url, webhooks=hooks)) as mem:
            commit(mem, "ann")
            memory = mem.get_all(user_id="ann").items[0]
            mem.update(memory.id, "Ann moved to Porto in May", user_id="ann")
            mem.update(memory.id, "Ann moved to Porto in May", user_id="ann")  # no change
            mem.erase_user("ann")
            types = [json.loads(r.body)["type"] for r in rx.wait_for(3)]
            (erased,) = erasures.wait_for(1)
        assert types == ["turns.committed", "summaries.changed", "user.erased"]
        assert json.loads(erased.body)["user_id"] == "ann"


def test_a_read_only_memory_emits_nothing_and_starts_no_thread(tmp_path: Path) -> None:
    with Receiver() as rx:
        Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing")).close()
        before = set(threading.enumerate())
        with Memory(tmp_path / "m", config=config(rx.url), read_only=True) as mem:
            assert mem.search("Lisbon", user_id="ann") == []
            assert not [t for t in threading.enumerate() if t not in before and "webhook" in t.name]
        assert not (tmp_path / "m" / "webhooks").exists()


def test_an_object_store_without_an_outbox_file_is_refused_before_opening() -> None:
    with pytest.raises(ConfigError, match="webhook_outbox"):
        Memory("s3://no-such-bucket/mem", config=config("http://127.0.0.1:9/x"))


CHILD = textwrap.dedent(
    """
    import sys, time
    from hymem import Memory, MemoryConfig

    store, url = sys.argv[1], sys.argv[2]
    cfg = MemoryConfig.defaults(
        embedder="hashing",
        webhooks=[{"url": url, "secret": sys.argv[3], "name": "rx", "allow_private_targets": True}],
        webhook_backoff_s=0.05, webhook_backoff_max_s=0.1, webhook_max_attempts=1000,
    )
    mem = Memory(store, config=cfg)
    turns = [{"speaker": "Ann", "text": "I moved to Lisbon in March for the new job."},
             {"speaker": "Bo", "text": "Nice! How is Lisbon treating you so far?"}]
    mem.add(turns, user_id="ann", session_id="s1")
    print("flushed", *mem.flush(user_id="ann").segments_written, flush=True)
    time.sleep(60)
    """
)


def test_an_event_committed_before_a_sigkill_is_delivered_after_restart(tmp_path: Path) -> None:
    rx = Receiver()  # not started: the receiver is down while the child writes
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "m"), rx.url, SECRET],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "LANCEDB_LOG": "error"},
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert line[:1] == ["flushed"] and proc.returncode == -signal.SIGKILL
    box = Outbox(tmp_path / "m" / "webhooks" / "outbox.sqlite3")
    (row,) = box.rows()
    assert row["state"] == "pending" and row["attempts"] >= 0  # the receiver never had it
    box.close()
    hooks = json.dumps([{"url": rx.url, "secret": SECRET, "name": "rx", **LOCAL}])
    args = ["webhooks", "--store", str(tmp_path / "m"), "--json"]
    shown = CliRunner().invoke(app, args, env={"HYMEM_WEBHOOKS": hooks})
    assert shown.exit_code == 0, shown.output
    (status,) = json.loads(shown.output)["endpoints"]
    assert (status["endpoint"], status["pending"], status["delivered"]) == ("rx", 1, 0)

    with rx, Memory(tmp_path / "m", config=config(rx.url)):  # the receiver is up now
        (got,) = rx.wait_for(1)
    event = json.loads(got.body)
    assert verify(SECRET, got.headers, got.body) == row["event_id"] == event["id"]
    assert event["data"]["segment_ids"] == line[1:]
