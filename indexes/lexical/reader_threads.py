"""Waiting out the reload Tantivy hands to a thread of its own whenever an index is opened.

tantivy-py's `Index(...)` builds a reader with Tantivy's default policy (reload when meta.json
changes) before hymem can ask for manual reloads. That reader subscribes to the folder's
meta.json watcher, a thread that looks at the file at once and, a first look counting as a
change, hands every subscriber's reload to a `watch-callbacks` thread. `config_reader("manual")`
replaces the reader a moment later, but a reload already handed over still runs: it reopens
every segment through the memory maps the new reader shares. On a loaded machine that thread can
run long after the open returned, and a segment file truncated meanwhile then faults with SIGBUS
outside all of hymem's size checks, killing the process.

The watcher waits for the reloads it handed over and then sleeps until its next look, so once
every watcher thread an open started is asleep (or gone), no such reload is pending: `settle`
waits for that. A watcher that has not named itself yet has not looked yet, and finds the default
reader gone when it does. Linux shows all this in /proc (a thread's name, and the kernel function
or system call it waits in); where /proc says nothing the window stays as Tantivy leaves it: a
truncation within moments of an open can fault, like one racing a search (`mapped_files.py`).
"""

from __future__ import annotations

import errno
import platform
import time
from pathlib import Path
from typing import Literal

# Tantivy's "thread-tantivy-meta-file-watcher", as Linux keeps it (15 characters).
WATCHER_NAME = "thread-tantivy-"
_TASKS = Path("/proc/self/task")
# nanosleep and clock_nanosleep, for a kernel whose wchan file says nothing (it may read "0").
_SLEEP_CALLS: dict[str, frozenset[str]] = {
    "x86_64": frozenset({"35", "230"}),
    "aarch64": frozenset({"101", "115"}),
}
_POLL_S = 0.001

Settled = Literal["settled", "timeout", "unobservable"]
State = Literal["gone", "asleep", "busy", "unknown"]


def watcher_threads() -> frozenset[int]:
    """Ids of this process's Tantivy meta.json watcher threads (none where /proc is absent)."""
    found: set[int] = set()
    try:
        tids = [t.name for t in _TASKS.iterdir()]
    except OSError:
        return frozenset()
    for tid in tids:
        try:
            name = (_TASKS / tid / "comm").read_text().strip()
        except OSError:
            continue  # it exited meanwhile
        if name == WATCHER_NAME:
            found.add(int(tid))
    return frozenset(found)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def thread_state(tid: int) -> State:
    """Whether watcher thread `tid` is asleep between two looks at meta.json, busy (looking,
    or waiting for the reloads it handed over), gone, or cannot be told."""
    task = _TASKS / str(tid)
    try:
        stat = (task / "stat").read_text()
    except OSError as exc:
        return "gone" if exc.errno in (errno.ENOENT, errno.ESRCH) else "unknown"
    if stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"]):
        return "gone"  # exited, not yet reaped
    wchan = (_read(task / "wchan") or "").strip()
    if "nanosleep" in wchan:
        return "asleep"
    call = (_read(task / "syscall") or "").split()
    sleeps = _SLEEP_CALLS.get(platform.machine())
    if call and sleeps is not None:
        return "asleep" if call[0] in sleeps else "busy"
    if wchan not in ("", "0"):
        return "busy"  # waiting in something other than its sleep
    return "unknown"


def settle(before: frozenset[int], timeout_s: float) -> Settled:
    """Wait until every watcher thread not in `before` (the ones an open just started) is
    asleep or gone. "timeout": one was still busy after `timeout_s`; "unobservable": /proc
    could not tell (nothing is waited for then)."""
    pending = set(watcher_threads() - before)
    deadline = time.monotonic() + timeout_s
    while pending:
        states = {tid: thread_state(tid) for tid in pending}
        if "unknown" in states.values():
            return "unobservable"
        pending = {tid for tid, state in states.items() if state == "busy"}
        if not pending:
            break
        if time.monotonic() >= deadline:
            return "timeout"
        time.sleep(_POLL_S)
    return "settled"


__all__ = ["WATCHER_NAME", "Settled", "settle", "thread_state", "watcher_threads"]
