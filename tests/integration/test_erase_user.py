"""Erasing a user for real: a unique canary string written for two users through every path
(turns, segments, summaries and their versions, traces, the sleep journal, the model response
cache, the lexical index), one user erased, then every file under the store folder is scanned
byte by byte. Real LanceDB + Tantivy, the real openai client against the scripted server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory
from hymem.core.errors import ErasureInProgressError, HymemError, ReadOnlyStoreError
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import embedder_of, store_of

from tests.doubles import scripted_config
from tests.fixtures_reader import request_text
from tests.fixtures_sleep import newer_ids, seed_store, target_text
from tests.fixtures_store import make_turns

pytestmark = pytest.mark.integration

SEGMENT_BLOCK = re.compile(r'<segment id="([^"]+)"[^>]*>(.*?)</segment>', re.DOTALL)
CANARY = {user: f"zq{uuid.uuid4().hex}" for user in ("alice", "bob")}


def summarise(body: dict[str, Any]) -> dict[str, Any]:
    """One fact per segment, quoting what was said (so the canary reaches the summaries)."""
    segments = []
    for seg_id, lines in SEGMENT_BLOCK.findall(request_text(body)):
        said = lines.strip().splitlines()[0].split(": ", 1)[-1]
        segments.append(
            {"segment_id": seg_id, "facts": [{"text": f"User said {said}", "turns": [1]}]}
        )
    return {"segments": segments}


def merge_first_code(body: dict[str, Any]) -> dict[str, Any]:
    """Sleep merges the first locker-code memory (so the journal holds the user's words)."""
    text, ids = target_text(body), newer_ids(body)
    if "locker code 0" in text and ids:
        return {
            "action": "update",
            "text": f"{text} (merged)",
            "evidence_id": ids[0],
            "reason": "same",
        }
    return {"action": "ignore", "text": None, "evidence_id": None, "reason": "unrelated"}


def files_holding(folder: Path, needle: str) -> list[str]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and needle.encode() in path.read_bytes():
            found.append(str(path.relative_to(folder)))
    return sorted(found)


def open_memory(folder: Path, server: Any, **kw: Any) -> Memory:
    config = scripted_config(
        server,
        embedder="hashing",
        llm_cache_dir=str(folder / "llm-cache"),
        sleep_similarity_floor=0.05,
        # erasure must find the user in the sleep journal too: leave the merges to sleep
        consolidate_on_write=False,
    )
    return Memory(folder, config=config, embedder=HashingEmbedder(64), **kw)


def fill(mem: Memory, user: str) -> None:
    for i in range(4):
        said = f"my locker code {i} is {CANARY[user]} remember it"
        turns = [{"speaker": user, "text": said}, {"speaker": "bot", "text": f"noted {i}"}]
        mem.add(turns, user_id=user, session_id=f"s{i}", timestamp=f"2023-05-0{i + 1}T10:00:00")
    assert mem.flush(user_id=user).error is None
    mem.ask(f"what is my locker code {CANARY[user]}?", user_id=user, depth="light")
    last = next(r for r in mem.get_all(user_id=user).items if "locker code 3" in r.text)
    mem.update(last.id, f"User's locker code is {CANARY[user]} (corrected)", user_id=user)
    mem.sleep(user_id=user)


def _tantivy_segment_files(folder: Path) -> set[str]:
    files = (folder / "tantivy").iterdir()
    return {p.name for p in files if not p.name.endswith(".json") and not p.name.startswith(".")}


@pytest.fixture
def two_users(tmp_path: Path, llm_server: Any) -> Path:
    llm_server.add_rule(role="summarise", reply=summarise)
    llm_server.add_rule(role="light_answer", reply={"answer": "a code", "complete": True})
    llm_server.add_rule(role="reflect", reply={"complete": True, "new_question": None})
    llm_server.add_rule(role="update", reply=merge_first_code)
    folder = tmp_path / "mem"
    with open_memory(folder, llm_server) as mem:
        fill(mem, "alice")
        fill(mem, "bob")
        # Bulk for bob, then one compaction: alice's rows become a small share of shared
        # fragments, the case LanceDB's own optimize() never rewrites (it waits for 10 %).
        texts = [f"bob's note number {i} about the garden" for i in range(150)]
        seed_store(store_of(mem), embedder_of(mem), "bob", texts)
        store_of(mem).append_turns(make_turns("bob", 150, prefix="bulk"))
        mem.optimize()
    return folder


def test_the_erased_users_bytes_are_gone_and_the_other_user_is_intact(
    two_users: Path, llm_server: Any
) -> None:
    folder = two_users
    before = files_holding(folder, CANARY["alice"])
    # The canary really is on disk in every kind of file first (else the scan proves nothing).
    # Tantivy keeps terms in a compressed dictionary, not as raw bytes: its proof is below.
    for part in ("lance/turns", "lance/segments", "lance/summaries", "lance/traces", "sleep/"):
        assert any(f.startswith(part) for f in before), (part, before)
    assert any(f.startswith("llm-cache") for f in before), before
    old_segments = _tantivy_segment_files(folder)
    with open_memory(folder, llm_server) as mem:
        report = mem.erase_user("alice")
        assert report.turns == 8 and report.segments >= 4
        assert report.summaries >= 5 and report.traces == 1
        assert report.sleep_journal_entries >= 1 and report.cached_responses >= 1
        assert files_holding(folder, CANARY["alice"]) == []
        # Every Tantivy segment file that held the user's documents is gone (rebuilt aside).
        assert not old_segments & _tantivy_segment_files(folder)
        assert mem.stats(user_id="alice")["turns"] == 0
        assert mem.get_all(user_id="alice").items == []
        hits = mem.search(f"locker {CANARY['bob']}", user_id="bob", mode="lexical")
        assert hits and CANARY["bob"] in hits[0].text
        assert mem.stats(user_id="bob")["turns"] == 158 and len(mem.traces(user_id="bob")) == 1
        mem.add([{"role": "user", "content": "still here"}], user_id="bob")  # writes go on
    assert files_holding(folder, CANARY["bob"])
    with Memory(folder, embedder=HashingEmbedder(64), read_only=True) as reader:
        assert reader.search(CANARY["bob"], user_id="bob", mode="lexical")
        with pytest.raises(ReadOnlyStoreError):
            reader.erase_user("bob")


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from hymem import Memory
    from hymem.embed.embedders import HashingEmbedder
    from hymem.indexes.store import erasure

    real = erasure.Eraser.purge
    def purge_then_die(self):
        os.kill(os.getpid(), signal.SIGKILL)  # rows deleted, files not yet rewritten
    erasure.Eraser.purge = purge_then_die
    mem = Memory(sys.argv[1], embedder=HashingEmbedder(64), config=None)
    mem.erase_user("alice")
    """
)


def test_an_erase_killed_half_way_is_finished_by_the_next_open(
    two_users: Path, llm_server: Any
) -> None:
    env = {**os.environ, "HYMEM_LLM": "extractive", "HYMEM_EMBEDDER": "hashing"}
    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(two_users)], env=env, capture_output=True
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert (two_users / "journal.json").exists()
    assert files_holding(two_users / "lance", CANARY["alice"])  # deleted rows still on disk
    with open_memory(two_users, llm_server) as mem:  # the open finishes the erase
        assert not (two_users / "journal.json").exists()
        assert files_holding(two_users / "lance", CANARY["alice"]) == []
        assert files_holding(two_users / "tantivy", CANARY["alice"]) == []
        assert mem.stats(user_id="alice")["turns"] == 0
        assert mem.stats(user_id="bob")["turns"] == 158
        again = mem.erase_user("alice")  # the rerun finishes what lies outside the store
        assert again.turns == 0
    assert files_holding(two_users, CANARY["alice"]) == []


def test_after_an_erase_the_writer_remembers_nothing_of_the_user(tmp_path: Path) -> None:
    """Before: the writer's view of pending turns survived the erase, so the next flush
    committed the erased turns again from memory, and re-adding the same message within the
    retry window was taken for a retry of an erased call and stored nothing."""
    from hymem import MemoryConfig

    said = [{"role": "user", "content": f"my locker code is {CANARY['alice']}"}]
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing", retry_window_s=600)
    with Memory(tmp_path / "m", config=config, embedder=HashingEmbedder(64)) as mem:
        mem.add(said, user_id="alice", session_id="s1")
        assert len(mem.pending(user_id="alice")) == 1
        mem.erase_user("alice")
        assert mem.flush(user_id="alice").segments_written == []
        assert mem.stats(user_id="alice")["turns"] == 0
        again = mem.add(said, user_id="alice", session_id="s1")
        assert again.new_turn_ids and mem.stats(user_id="alice")["turns"] == 1


ASKERS = 3


def test_asks_racing_an_erase_leave_nothing_of_the_user(
    two_users: Path, llm_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asks for alice run on threads while her erase runs; the askers stop (and are joined)
    once the store has erased her rows, before `erase_user` returns, so every ask began before
    the erase was over. Each ask is answered or refused with ErasureInProgressError. Afterwards
    no trace, turn, summary or cached model reply of hers is left, no file holds her canary
    (her questions carry it), and bob is untouched.

    Before: an ask running beside the erase queued its trace after the erase had flushed the
    trace queue, and the trace landed after the rows were deleted (6 left here)."""
    with open_memory(two_users, llm_server) as mem:
        stop = threading.Event()
        answered: list[str] = []
        refused: list[ErasureInProgressError] = []
        failures: list[BaseException] = []

        def ask_until_stopped(n: int) -> None:
            i = 0
            while not stop.is_set():
                question = f"what is my locker code {CANARY['alice']} (asker {n}, ask {i})?"
                try:
                    answered.append(mem.ask(question, user_id="alice", depth="light").trace_id)
                except ErasureInProgressError as exc:
                    refused.append(exc)
                    time.sleep(0.01)
                except HymemError as exc:
                    failures.append(exc)
                i += 1

        askers = [threading.Thread(target=ask_until_stopped, args=(n,)) for n in range(ASKERS)]
        store_erase = store_of(mem).erase_user

        def erase_then_stop_the_askers(user_id: str) -> dict[str, int]:
            removed = store_erase(user_id)
            stop.set()
            for t in askers:
                t.join(60)
                assert not t.is_alive(), "an ask is stuck behind the erase"
            return removed

        monkeypatch.setattr(store_of(mem), "erase_user", erase_then_stop_the_askers)
        for t in askers:
            t.start()
        deadline = time.monotonic() + 60
        while len(answered) < 2 * ASKERS and time.monotonic() < deadline:
            time.sleep(0.01)  # asks are running (some in flight) when the erase starts
        report = mem.erase_user("alice")
        assert stop.is_set() and failures == []
        assert refused, "no ask ran while the erase did"
        assert "alice" in str(refused[0]) and "being erased" in str(refused[0])
        assert report.traces == 1 + len(answered)  # the fixture's ask and every answered one
        assert mem.traces(user_id="alice") == []
        assert mem.stats(user_id="alice") == mem.stats(user_id="nobody")
        assert mem.get_all(user_id="alice", level="turn").items == []
        assert mem.stats(user_id="bob")["turns"] == 158 and len(mem.traces(user_id="bob")) == 1
        assert mem.ask("what is my locker code?", user_id="alice", depth="light")  # afresh
    assert files_holding(two_users, CANARY["alice"]) == []
