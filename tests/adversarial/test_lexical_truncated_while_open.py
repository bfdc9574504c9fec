"""A Tantivy segment file truncated under an open store never kills the process.

Tantivy reads segments through memory maps, and reading a mapped file that shrank faults with
SIGBUS: no exception, the host process dies. The store checks the mapped files' sizes before
touching them, so the damage becomes a noted problem: searches find nothing lexically (flagged),
a reader recovers once a writer has rebuilt the index, a writer rebuilds on its next commit.

Each case runs in a child process, so a regression fails its test instead of killing pytest; a
child that fails says how it ended (exit code or signal) and what it wrote to stderr, with
Python's fault handler on, so a fatal signal names the threads' Python stacks.

tantivy-py builds every index with a reader that watches meta.json, and the watcher's first look
hands that reader's reload to a thread of its own. hymem switches the reader to manual reloads at
once, but a reload already handed over still reads every segment through the shared memory maps,
and on a loaded machine it can run long after the open returned: a segment truncated meanwhile
killed the process with SIGBUS. The slow case recreates that load on one CPU."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hymem.core.types import Level
from hymem.indexes.lexical.docs import LexDoc
from hymem.indexes.lexical.index import LexicalIndex
from hymem.indexes.protocol import RowScope

from tests.fixtures_store import DIM, commit_texts, open_store

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _truncate_segments(folder: Path, index_folder: str = "tantivy") -> int:
    files = [
        f
        for f in (folder / index_folder).iterdir()
        if not f.name.endswith(".json") and not f.name.startswith(".")
    ]
    for f in files:
        f.write_bytes(b"")
    return len(files)


def _ids(hits: list[tuple[str, float]]) -> list[str]:
    return sorted(i for i, _ in hits)


def scenario(mode: str) -> dict[str, Any]:
    """Run in the child: map the index by searching, truncate every segment file, go on."""
    from hymem.embed.embedders import HashingEmbedder

    folder = Path(tempfile.mkdtemp()) / "m"
    emb = HashingEmbedder(DIM)
    with open_store(folder, emb) as store:
        commit_texts(store, emb, "alice", ["Alice adopted a cat", "Alice sings"], segment_id="a1")
        commit_texts(store, emb, "alice", ["Alice feeds the cat"], segment_id="a2")
    out: dict[str, Any] = {}
    with open_store(folder, emb, read_only=(mode == "reader")) as store:
        out["before"] = _ids(store.lexical_search(RowScope("alice"), "cat", 5))
        out["truncated"] = _truncate_segments(folder)
        out["after"] = _ids(store.lexical_search(RowScope("alice"), "cat", 5))
        out["flagged"] = store.lexical_unavailable
        if mode == "reader":
            with open_store(folder, emb):  # a writer's open finds the damage and rebuilds
                pass
        else:
            commit_texts(store, emb, "alice", ["Alice's cat naps"], segment_id="a3")
        out["recovered"] = _ids(store.lexical_search(RowScope("alice"), "cat", 5))
        out["flagged_after_repair"] = store.lexical_unavailable
    return out


def opens_truncated_at_once(rounds: int, cpu: int) -> dict[str, Any]:
    """Run in the child, pinned to `cpu` beside the parent's CPU hogs: build a two-segment
    index, then `rounds` times open a copy of it (writer and reader in turn) and truncate its
    segment files the moment the open returns, before any search. A reload tantivy still runs
    on a thread of its own after the open would read them and fault."""
    os.sched_setaffinity(0, {cpu})
    root = Path(tempfile.mkdtemp())
    built = LexicalIndex(root / "built", writable=True)
    for i in range(2):  # two commits, two segments
        built.upsert([LexDoc(f"d{i}", "alice", Level.SUMMARY, f"Alice's cat {i}")])
        built.commit()
    built.close()
    flagged = 0
    for n in range(rounds):
        shutil.copytree(root / "built", root / f"copy{n}")
        lex = LexicalIndex(root / f"copy{n}", writable=n % 2 == 0, expected=True)
        _truncate_segments(root, f"copy{n}")
        time.sleep(0.01)  # time for a stray reload to run
        found = lex.search("alice", "cat", 5)
        flagged += found == [] and not lex.available
        lex.close()
        shutil.rmtree(root / f"copy{n}")
    shutil.rmtree(root)
    return {"rounds": rounds, "flagged": flagged}


def _child_failure(proc: subprocess.CompletedProcess[str]) -> str:
    """How the child ended and what it said: the exit code or signal, stderr's lines that are
    not structured log lines (a traceback, a fault handler's stacks, a Rust panic), then the
    last log lines for context."""
    code = proc.returncode
    how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
    lines = proc.stderr.splitlines()
    other = [ln for ln in lines if not ln.startswith("{")]
    logs = [ln for ln in lines if ln.startswith("{")]
    return (
        f"the child process failed: {how}\n"
        + "--- stderr, not log lines ---\n"
        + "\n".join(other)[-6000:]
        + "\n--- stderr, last log lines ---\n"
        + "\n".join(logs[-8:])[-4000:]
    )


def _run_child(call: str) -> dict[str, Any]:
    code = (
        "import json; import tests.adversarial.test_lexical_truncated_while_open as case; "
        f"print('RESULT ' + json.dumps(case.{call}))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, _child_failure(proc)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, f"the child printed no result\n{_child_failure(proc)}"
    return json.loads(line.removeprefix("RESULT "))


def test_reader_survives_a_segment_truncated_under_it_and_recovers() -> None:
    out = _run_child("scenario('reader')")
    assert out["before"] == ["a1-s0", "a2-s0"] and out["truncated"] > 0
    assert out["after"] == [] and out["flagged"]
    assert out["recovered"] == ["a1-s0", "a2-s0"] and not out["flagged_after_repair"]


def test_writer_survives_a_segment_truncated_under_it_and_rebuilds() -> None:
    out = _run_child("scenario('writer')")
    assert out["before"] == ["a1-s0", "a2-s0"] and out["truncated"] > 0
    assert out["after"] == [] and out["flagged"]
    assert out["recovered"] == ["a1-s0", "a2-s0", "a3-s0"] and not out["flagged_after_repair"]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pins CPUs (Linux)")
def test_an_index_truncated_the_moment_it_opens_on_a_loaded_cpu_never_kills_the_process() -> None:
    """Three CPU-bound processes share the child's one CPU, so tantivy's threads wait their
    turn as on a machine at load ~8; before the fix the first rounds died with SIGBUS."""
    cpu = min(os.sched_getaffinity(0))
    hog = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(3)]
    try:
        for h in hogs:
            os.sched_setaffinity(h.pid, {cpu})
        out = _run_child(f"opens_truncated_at_once(30, {cpu})")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert out == {"rounds": 30, "flagged": 30}
