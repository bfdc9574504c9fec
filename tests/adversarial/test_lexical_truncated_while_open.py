"""A Tantivy segment file truncated under an open store never kills the process.

Tantivy reads segments through memory maps, and reading a mapped file that shrank faults with
SIGBUS: no exception, the host process dies. The store checks the mapped files' sizes before
touching them, so the damage becomes a noted problem: searches find nothing lexically (flagged),
a reader recovers once a writer has rebuilt the index, a writer rebuilds on its next commit.

Each case runs in a child process, so a regression fails its test instead of killing pytest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hymem.indexes.protocol import RowScope

from tests.fixtures_store import DIM, commit_texts, open_store

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _truncate_segments(folder: Path) -> int:
    files = [
        f
        for f in (folder / "tantivy").iterdir()
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


def _run_child(mode: str) -> dict[str, Any]:
    code = (
        "import json, sys; from tests.adversarial.test_lexical_truncated_while_open "
        f"import scenario; print('RESULT ' + json.dumps(scenario({mode!r})))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != -signal.SIGBUS, f"SIGBUS: the process died\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_reader_survives_a_segment_truncated_under_it_and_recovers() -> None:
    out = _run_child("reader")
    assert out["before"] == ["a1-s0", "a2-s0"] and out["truncated"] > 0
    assert out["after"] == [] and out["flagged"]
    assert out["recovered"] == ["a1-s0", "a2-s0"] and not out["flagged_after_repair"]


def test_writer_survives_a_segment_truncated_under_it_and_rebuilds() -> None:
    out = _run_child("writer")
    assert out["before"] == ["a1-s0", "a2-s0"] and out["truncated"] > 0
    assert out["after"] == [] and out["flagged"]
    assert out["recovered"] == ["a1-s0", "a2-s0", "a3-s0"] and not out["flagged_after_repair"]
