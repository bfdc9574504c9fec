"""What an open of the lexical index waits for, read from /proc on real Tantivy: the meta.json
watcher thread tantivy-py's default reader starts must be asleep (its first look and the reload
it handed over both done) before the open returns, and /proc must tell the states apart.

The crash this guards against needs a loaded CPU to show; that case is in
tests/adversarial/test_lexical_truncated_while_open.py."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hymem.core.types import Level
from hymem.indexes.lexical import index as index_module
from hymem.indexes.lexical.docs import LexDoc
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.lexical.reader_threads import (
    Settled,
    settle,
    thread_state,
    watcher_threads,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)"),
]


def _callback_threads() -> list[str]:
    """Threads running the reloads a meta.json watcher handed over."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            if (task / "comm").read_text().strip() == "watch-callbacks":
                found.append(task.name)
        except OSError:
            continue  # it exited meanwhile
    return found


def test_thread_state_tells_a_sleeping_thread_from_a_waiting_one_and_a_finished_one() -> None:
    ids: dict[str, int] = {}
    release = threading.Event()

    def sleeper() -> None:
        ids["sleeper"] = threading.get_native_id()
        time.sleep(5)

    def waiter() -> None:
        ids["waiter"] = threading.get_native_id()
        release.wait()

    threads = [threading.Thread(target=f, daemon=True) for f in (sleeper, waiter)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    assert thread_state(ids["sleeper"]) == "asleep"
    assert thread_state(ids["waiter"]) == "busy"  # a futex, as a watcher waiting on a reload
    release.set()
    threads[1].join()  # Python's join returns before the kernel has finished the thread
    deadline = time.monotonic() + 5
    while thread_state(ids["waiter"]) != "gone" and time.monotonic() < deadline:
        time.sleep(0.001)
    assert thread_state(ids["waiter"]) == "gone"


def test_an_open_returns_once_the_watcher_it_started_is_asleep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lex = LexicalIndex(tmp_path / "t", writable=True)
    lex.upsert([LexDoc("d1", "alice", Level.SUMMARY, "Alice's cat")])
    lex.commit()
    lex.close()
    # What each open's own wait saw: the watchers already named when it began (one that names
    # itself later has not looked yet and finds the default reader gone), and whether every
    # one of them was seen asleep or gone before the open returned. Sampled after the open,
    # a watcher may already be in its next look (every 500 ms): that look hands nothing over.
    waited: list[tuple[frozenset[int], Settled]] = []

    def spying_settle(before: frozenset[int], timeout_s: float) -> Settled:
        started = watcher_threads() - before
        result = settle(before, timeout_s)
        waited.append((started, result))
        return result

    monkeypatch.setattr(index_module, "settle", spying_settle)
    seen = 0
    for round_ in range(20):
        before = watcher_threads()
        waited.clear()
        lex = LexicalIndex(tmp_path / "t", writable=round_ % 2 == 0, expected=True)
        assert [result for _, result in waited] == ["settled"]
        assert _callback_threads() == []  # no reload handed over is still running
        assert settle(before, 5.0) == "settled"  # (a later look, every 500 ms, is brief)
        seen += len(watcher_threads() - before)
        lex.close()
    assert seen, "no open started a meta.json watcher: tantivy-py changed how it reads"
