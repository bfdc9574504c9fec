"""Worker processes for the object-store tests: each opens its own `Memory` on one s3:// URI,
as separate app servers would. Run with multiprocessing's spawn context (no inherited state)."""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from hymem import LeaseLostError, Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

DIM = 64


def open_memory(uri: str, options: dict[str, str], cache: str, **config: Any) -> Memory:
    cfg = MemoryConfig.defaults(llm="extractive", cache_dir=cache, **config)
    return Memory(uri, storage_options=options, embedder=HashingEmbedder(DIM), config=cfg)


def write_user(
    uri: str,
    options: dict[str, str],
    cache: str,
    user: str,
    lines: list[str],
    start: Any,
    out: Any,
) -> None:
    """Add `lines` one call each for `user`, then flush; report every acknowledged turn id.
    `start` (an Event) lines the workers up so their writes overlap."""
    with open_memory(uri, options, cache, lease_wait_s=60.0, lease_linger_s=0.0) as mem:
        start.wait(30)
        acked: list[str] = []
        for line in lines:
            acked.extend(_add_retrying_a_lost_lease(mem, user, line))
        mem.flush(user_id=user)
        out.put((user, acked))


def _add_retrying_a_lost_lease(mem: Memory, user: str, line: str, tries: int = 3) -> list[str]:
    """One add, sent again when it reports the lease lost, as its error says to: a worker
    starved past the lease's ttl on a loaded machine loses it to the other, and that add
    wrote nothing (the test then checks that the retry duplicates nothing)."""
    for attempt in range(tries):
        try:
            return mem.add([{"speaker": user, "text": line}], user_id=user).turn_ids
        except LeaseLostError:
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def write_until_stopped(
    uri: str,
    options: dict[str, str],
    cache: str,
    user: str,
    start: Any,
    stop: Any,
    out: Any,
) -> None:
    """Add one line a call for `user` until `stop` (an Event) is set, then flush. An add that
    fails is noted (its index and error) and the next goes on, so a test sees every failure:
    reports `(acked turn ids, errors)`. Sets `start` once its memory is open."""
    from hymem.core.errors import HymemError

    with open_memory(uri, options, cache, lease_wait_s=60.0, lease_linger_s=0.0) as mem:
        start.set()
        acked: list[str] = []
        errors: list[str] = []
        n = 0
        while not stop.is_set():
            line = f"{user} planted tulip bulb number {n} by the fence."
            try:
                acked.extend(mem.add([{"speaker": user, "text": line}], user_id=user).turn_ids)
            except HymemError as exc:
                errors.append(f"add {n}: {type(exc).__name__}: {exc}")
            n += 1
        try:
            flushed = mem.flush(user_id=user)
            if flushed.error is not None:
                errors.append(f"flush: {flushed.error}")
        except HymemError as exc:
            errors.append(f"flush: {type(exc).__name__}: {exc}")
        out.put((acked, errors))


def open_at_once(uris: list[str], options: dict[str, str], cache: str, line: Any, out: Any) -> None:
    """Open each of `uris` (new prefixes) in turn, together with the other workers waiting
    on the barrier `line`; report per URI the identity this worker read, or the error."""
    for n, uri in enumerate(uris):
        line.wait(120)
        try:
            with open_memory(uri, options, f"{cache}-{n}") as mem:
                out.put((n, "ok", json.dumps(store_of(mem).meta(), sort_keys=True, default=str)))
        except Exception as exc:  # the test reports it
            out.put((n, "error", f"{type(exc).__name__}: {exc}"))


def find_after_refresh(
    uri: str, options: dict[str, str], cache: str, user: str, query: str, out: Any
) -> None:
    """A second worker's view of `user`: what search finds after catching up."""
    with open_memory(uri, options, cache) as mem:
        mem.refresh()
        out.put([h.text for h in mem.search(query, user_id=user, k=5)])


def killed_mid_commit() -> None:
    """`python -m tests.s3_workers URI CACHE USER` with HYMEM_TEST_OPTIONS: add turns, then
    die by SIGKILL inside the flush's commit, after its rows landed in LanceDB and before the
    turns were marked stored (the journal object is left behind, and the lease held)."""
    uri, cache, user = sys.argv[1:4]
    options = json.loads(os.environ["HYMEM_TEST_OPTIONS"])
    mem = open_memory(uri, options, cache, lease_ttl_s=3.0)
    for i in range(6):
        mem.add([{"speaker": user, "text": f"Kayak trip number {i} on the lake."}], user_id=user)
    from hymem.indexes.lance.turn_log import TurnLog

    def die(*args: object, **kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    TurnLog.set_status = die  # type: ignore[method-assign]
    mem.flush(user_id=user)
    raise SystemExit("the commit did not reach set_status")


if __name__ == "__main__":
    killed_mid_commit()
