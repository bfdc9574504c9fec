"""The management write paths lose nothing to a SIGKILL: an update or delete killed anywhere in
its journaled write, and an import killed between commits, leave a store the next open settles,
with the memory as it was or as corrected and exactly one active version (real LanceDB + Tantivy,
the extractive backend, a process killed for real).

A correction's new and retired versions are one LanceDB merge_insert, so there is no moment with
the new version written and the old one not yet retired. The crash windows left are: before that
commit (the journal is begun, nothing of the correction is in LanceDB), right after it (LanceDB
holds the change, Tantivy does not), and after Tantivy's commit too but before the journal is
closed."""

from __future__ import annotations

import json
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

# Killed at one point of the correction's journaled write (`CommitWriter.apply_summary_changes`),
# argv[2]: "before_commit" (in place of its one LanceDB merge_insert of the summaries),
# "after_commit" (right after it, before Tantivy), "before_close" (after Tantivy's commit too,
# before the journal is cleared). Only calls made inside the correction die.
KILL_IN_CORRECTION = OPEN + textwrap.dedent("""
    from hymem.indexes.lance import schema as S
    from hymem.indexes.lance.tables import LanceTables
    from hymem.indexes.store.commits import CommitWriter
    at, inside = sys.argv[2], []
    real_apply, real_upsert = CommitWriter.apply_summary_changes, LanceTables.upsert
    real_finish = CommitWriter._finish
    def apply(self, *a, **k):
        inside.append(True)
        return real_apply(self, *a, **k)
    def upsert(self, name, data, on):
        if inside and name == S.SUMMARIES and at == "before_commit":
            die()
        real_upsert(self, name, data, on)
        if inside and name == S.SUMMARIES and at == "after_commit":
            die()
    def finish(self, user_id):
        if inside and at == "before_close":
            die()
        real_finish(self, user_id)
    CommitWriter.apply_summary_changes = apply
    LanceTables.upsert = upsert
    CommitWriter._finish = finish
    getattr(mem, sys.argv[3])(sys.argv[4], *sys.argv[5:], user_id="u")
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


def _journal(folder: Path) -> dict[str, object]:
    """The journal the killed writer left (read before any open settles it)."""
    entry: dict[str, object] = json.loads((folder / "journal.json").read_text())
    return entry


def _read_only(folder: Path) -> Memory:
    """An open that repairs nothing: the store exactly as the kill left it."""
    return Memory(
        folder, config=MemoryConfig(**CONFIG), embedder=HashingEmbedder(64), read_only=True
    )


CORRECTIONS = [
    ("update", ["Ann's dog is called Max"], SummaryStatus.ACTIVE),
    ("delete", [], SummaryStatus.DELETED),
]


@pytest.mark.parametrize("at", ["after_commit", "before_close"])
@pytest.mark.parametrize(("method", "extra", "final"), CORRECTIONS)
def test_a_correction_killed_after_its_lancedb_commit_is_rolled_forward(
    folder: Path, method: str, extra: list[str], final: SummaryStatus, at: str
) -> None:
    """Killed once the correction's one LanceDB commit landed, before its journal was closed
    (Tantivy not yet told, or told but not recorded): the open rolls it forward and re-indexes,
    so the memory is its new version alone, found by both retrievers, the old text by neither.
    (This replaces "killed between writing the new version and retiring the old one", a state
    the single commit no longer has.)"""
    with _open(folder) as mem:
        target = _target(mem)
    _run(KILL_IN_CORRECTION, str(folder), at, method, target, *extra)
    assert _journal(folder)["op"] == "apply_summary_changes"  # killed inside the write
    with _read_only(folder) as mem:  # LanceDB already holds the whole change, nothing else
        assert _chain(mem, target) == [(SummaryStatus.SUPERSEDED, "summary"), (final, "user")]
    with _open(folder) as mem:  # the open settles the journal
        assert not (folder / "journal.json").exists()
        chain = _chain(mem, target)
        assert chain == [(SummaryStatus.SUPERSEDED, "summary"), (final, "user")]
        active = [r for r in mem.history(target, user_id="u") if r.status is SummaryStatus.ACTIVE]
        assert len(active) == (1 if method == "update" else 0)
        for mode in ("hybrid", "lexical"):
            hits = [h.text for h in mem.search("dog Max Rex", user_id="u", mode=mode)]
            assert hits.count("Ann's dog is called Max") == (method == "update"), mode
            assert not any("Rex" in h for h in hits), mode
        assert [h.text for h in mem.search("Lisbon", user_id="u", mode="lexical")] == [
            r.text for r in mem.get_all(user_id="u").items if "Lisbon" in r.text
        ]


@pytest.mark.parametrize(("method", "extra", "final"), CORRECTIONS)
def test_a_correction_killed_before_its_lancedb_commit_leaves_the_memory_as_it_was(
    folder: Path, method: str, extra: list[str], final: SummaryStatus
) -> None:
    """Killed with the journal begun but in place of the correction's LanceDB commit: the open
    rolls it back (nothing of it landed), the memory is its one old version, and it can be
    corrected again."""
    with _open(folder) as mem:
        target = _target(mem)
    _run(KILL_IN_CORRECTION, str(folder), "before_commit", method, target, *extra)
    assert _journal(folder)["op"] == "apply_summary_changes"
    with _open(folder) as mem:
        assert not (folder / "journal.json").exists()
        assert _chain(mem, target) == [(SummaryStatus.ACTIVE, "summary")]
        for mode in ("hybrid", "lexical"):
            hits = [h.text for h in mem.search("dog Max Rex", user_id="u", mode=mode)]
            assert sum("Rex" in h for h in hits) == 1, mode
            assert "Ann's dog is called Max" not in hits, mode
        assert getattr(mem, method)(target, *extra, user_id="u").version == 2
        assert _chain(mem, target) == [(SummaryStatus.SUPERSEDED, "summary"), (final, "user")]


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
