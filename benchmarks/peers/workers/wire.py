"""The JSON-lines protocol every peer worker speaks with the driver (stdlib only: each worker
runs in its own virtual environment, which has none of hymem).

One request per line on stdin, `{"op": NAME, ...}`, one reply per line on stdout,
`{"ok": true, ...}` or `{"ok": false, "error": "..."}`. Ops: open, add, flush, search, load,
size, close (and `context` where a system has one). Timings are taken here, around the
library call, so the pipe and JSON never count. Libraries print to stdout at will, so the
protocol keeps a private copy of stdout and points file descriptor 1 at stderr before any
library is imported.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def take_stdout() -> Any:
    """The protocol's channel; afterwards anything written to fd 1 lands on stderr."""
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def folder_bytes(path: str | Path) -> int:
    """Bytes of every regular file under `path` (what `du --apparent-size` counts)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                total += os.path.getsize(full)
    return total


class Timer:
    """`with Timer() as t: ...; t.seconds`."""

    seconds = 0.0

    def __enter__(self) -> Timer:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t0


def serve(handlers: dict[str, Handler], channel: Any) -> None:
    """Answer requests until `close` or end of input. A failing op is answered with its error
    and the worker goes on: the driver decides whether the run can continue."""
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        op = request.pop("op")
        try:
            if op == "size":
                reply = {"bytes": folder_bytes(request["path"])}
            elif op not in handlers:
                raise KeyError(f"this worker has no op {op!r}")
            else:
                reply = handlers[op](request)
            out = {"ok": True, **reply}
        # The protocol's boundary: any library failure becomes an error reply for the driver.
        except Exception as exc:
            out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            traceback.print_exc(file=sys.stderr)
        channel.write(json.dumps(out) + "\n")
        if op == "close":
            return


PEER_OPS = ("open", "add", "flush", "search", "load", "close")


def serve_worker(worker: Any, channel: Any) -> None:
    """`serve` with the worker's method of each op's name, the set every peer worker answers."""
    serve({op: getattr(worker, op) for op in PEER_OPS}, channel)


def installed_versions(*packages: str) -> dict[str, str]:
    """The installed version of each package, for the report's versions line."""
    from importlib.metadata import version

    return {p: version(p) for p in packages}
