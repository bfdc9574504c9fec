"""The management write paths lose nothing to a SIGKILL: an update or delete killed between
writing its new version and retiring the old one, and an import killed between commits, leave
a store the next open settles, with exactly one active version per memory (real LanceDB +
Tantivy, the extractive backend, a process killed for real)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.types import SummaryStatus
from hymem.embed.embedders import HashingEmbedder

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"llm": "extractive", "embedder": "hashing"}

OPEN = """
import os, signal, sys
from hymem import Memory, MemoryConfig
from hymem.embed.embedders import HashingEmbedder
mem = Memory(sys.argv[1], config=MemoryConfig(llm="extractive", embedder="hashing"),
             embedder=HashingEmbedder(64))
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
"""

# Killed after the new version is in LanceDB, before the old one is retired.
KILL_IN_RETIRE = OPEN + textwrap.dedent("""
    from hymem.indexes.store.commits import CommitWriter
    CommitWriter.apply_status = die
    getattr(mem, sys.argv[2])(sys.argv[3], *sys.argv[4:], user_id="u")
""")

# Killed before anything of the correction is written.
KILL_BEFORE_ADD = OPEN + textwrap.dedent("""
    from hymem.indexes.lance.tables import LanceTables
    LanceTables.add = die
    getattr(mem, sys.argv[2])(sys.argv[3], *sys.argv[4:], user_id="u")
""")

# Killed inside the second of several journaled commits.
KILL_IN_IMPORT = OPEN + textwrap.dedent("""
    from hymem.manage import portable
    from hymem.indexes.store.store import Store
    portable.COMMIT_SEGMENTS = 1
    real, calls = Store.commit_segments, []
    def second_dies(self, *a, **k):
        calls.append(1)
        if len(calls) == 2:
            die()
        return real(self, *a, **k)
    Store.commit_segments = second_dies
    mem.import_records(sys.argv[2], user_id="v")
""")


def _run(script: str, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]


def _open(folder: Path) -> Memory:
    return Memory(folder, config=MemoryConfig(**CONFIG), embedder=HashingEmbedder(64))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    with _open(tmp_path / "m") as mem:
        for i, said in enumerate(["I adopted a dog named Rex", "I moved to Lisbon in May"]):
            turns = [{"speaker": "Ann", "text": said}, {"speaker": "Bo", "text": "Nice"}]
            mem.add(turns, user_id="u", session_id=f"s{i}")
        mem.flush(user_id="u")
    return tmp_path / "m"


def _target(mem: Memory) -> str:
    return next(r.id for r in mem.get_all(user_id="u").items if "Rex" in r.text)


def _chain(mem: Memory, memory_id: str) -> list[tuple[SummaryStatus, str]]:
    return [(r.status, r.origin) for r in mem.history(memory_id, user_id="u")]


@pytest.mark.parametrize(
    ("method", "extra", "final"),
    [("update", ["Ann's dog is called Max"], SummaryStatus.ACTIVE), ("delete", [], None)],
)
def test_a_correction_killed_before_retiring_the_old_version_is_rolled_forward(
    folder: Path, method: str, extra: list[str], final: SummaryStatus | None
) -> None:
    with _open(folder) as mem:
        target = _target(mem)
    _run(KILL_IN_RETIRE, str(folder), method, target, *extra)
    with _open(folder) as mem:  # the open settles the journal: the new version was complete
        chain = _chain(mem, target)
        assert chain[0] == (SummaryStatus.SUPERSEDED, "summary")
        assert chain[-1] == (final or SummaryStatus.DELETED, "user")
        active = [r for r in mem.history(target, user_id="u") if r.status is SummaryStatus.ACTIVE]
        assert len(active) == (1 if final else 0)
        hits = [h.text for h in mem.search("dog", user_id="u")]
        assert ("Ann's dog is called Max" in hits) == (method == "update")
        assert not any("Rex" in h for h in hits)


def test_a_correction_killed_before_writing_leaves_the_memory_as_it_was(folder: Path) -> None:
    with _open(folder) as mem:
        target = _target(mem)
    _run(KILL_BEFORE_ADD, str(folder), "update", target, "Ann's dog is called Max")
    with _open(folder) as mem:
        assert _chain(mem, target) == [(SummaryStatus.ACTIVE, "summary")]
        assert mem.update(target, "Ann's dog is called Max", user_id="u").version == 2


def test_an_import_killed_between_commits_is_finished_by_importing_again(
    folder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "u.jsonl"
    with _open(folder) as mem:
        exported = mem.export(out, user_id="u")
    _run(KILL_IN_IMPORT, str(folder), str(out))
    with _open(folder) as mem:
        mem.import_records(out, user_id="v")  # the rerun skips what landed and adds the rest
        counts = mem.stats(user_id="v")
        assert (counts["turns"], counts["segments"], counts["summaries"]) == (
            exported.turns,
            exported.segments,
            exported.summaries,
        )
        assert counts["pending_turns"] == 0
        assert [t.id for t in mem.get_all(user_id="v", level="turn").items] == [
            t.id for t in mem.get_all(user_id="u", level="turn").items
        ]
