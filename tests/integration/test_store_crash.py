"""Faults lose nothing and leave the store consistent: SIGKILL mid-write, failures between
the LanceDB and Tantivy writes, a missing or stale lexical index, and `reindex`."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hymem.core.types import StatusChange, SummaryStatus, TurnStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.lexical.index import LEXICAL_SCHEMA_VERSION, LexicalIndex
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.recovery import Recovery

from tests.fixtures_store import (
    assert_store_consistent,
    commit_texts,
    make_records,
    make_turns,
    open_store,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys
    from hymem.embed.embedders import HashingEmbedder
    from tests.fixtures_store import make_records, make_turns, open_store

    emb = HashingEmbedder(64)
    store = open_store(sys.argv[1], emb)
    start = int(sys.argv[2])
    for i in range(start, start + 10_000):
        turns = make_turns("u", 2, prefix=f"t{i}-")
        store.append_turns(turns)
        texts = [f"zq{i}a fact one", f"zq{i}b fact two", f"zq{i}c fact three"]
        seg, sums = make_records(emb, "u", texts, segment_id=f"g{i}",
                                 turn_ids=[t.id for t in turns])
        store.commit_segments("u", [seg], sums, [t.id for t in turns])
        print(f"done {i}", flush=True)
""")


def _run_and_kill(folder: Path, start: int, after: int, rng: random.Random) -> list[int]:
    """Start a writer, let it finish `after` commits, SIGKILL it inside the next one."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=env,
    )
    done: list[int] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("done "):
            done.append(int(line.split()[1]))
            if len(done) >= after:
                break
    # Kill inside a commit: the journal exists only while one is in flight. A random extra
    # delay moves the kill point across the LanceDB, Tantivy and turn-marking steps.
    journal, deadline = folder / "journal.json", time.monotonic() + 30
    while not journal.exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(rng.uniform(0.0, 0.03))
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    done += [int(x.split()[1]) for x in rest.splitlines() if x.startswith("done ")]
    assert proc.returncode == -signal.SIGKILL
    return done


def test_sigkill_mid_write_then_reopen_is_consistent(tmp_path: Path) -> None:
    folder, rng = tmp_path / "m", random.Random(7)
    emb = HashingEmbedder(64)
    committed = _run_and_kill(folder, 0, after=3, rng=rng)
    assert (folder / "journal.json").exists(), "the kill did not land inside a commit"
    with open_store(folder, emb) as store:  # reopen repairs whatever the kill left
        assert_store_consistent(store)
        present = {r["id"] for r in store.tables.rows("segments", None, ["id"])}
        assert {f"g{i}" for i in committed} <= present, "a committed write was lost"
        # at most the killed commit's two turns wait for the next flush
        assert len(store.get_turns("u", status=TurnStatus.PENDING)) <= 2


def _fail(*_: Any, **__: Any) -> None:
    raise OSError("injected fault")


def _dies(*_: Any, **__: Any) -> None:
    """In place of the in-process rollback: the process died before it could run."""


def test_failure_after_lancedb_write_rolls_forward_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashingEmbedder(64)
    store = open_store(tmp_path / "m", emb)
    store.append_turns(make_turns("u", 2, prefix="t"))
    with monkeypatch.context() as patch:
        patch.setattr(LexicalIndex, "commit", _fail)  # crash before Tantivy commits
        patch.setattr(Recovery, "after_failure", _dies)  # the process dies: no rollback
        with pytest.raises(OSError, match="injected"):
            commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
        store.close()
    with open_store(tmp_path / "m", emb) as store:
        assert store.counts("u")["pending_turns"] == 0
        assert {t.segment_id for t in store.get_turns("u")} == {"g1"}
        assert_store_consistent(store)


def test_a_failure_in_a_live_process_rolls_back_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller was told the commit failed, so its rows must not be served meanwhile and
    its turns must read as pending (the next flush redoes it), even if every row landed."""
    emb = HashingEmbedder(64)
    with open_store(tmp_path / "m", emb) as store:
        store.append_turns(make_turns("u", 2, prefix="t"))
        with monkeypatch.context() as patch, pytest.raises(OSError, match="injected"):
            patch.setattr(LexicalIndex, "commit", _fail)
            commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
        counts = store.counts("u")
        assert (counts["segments"], counts["summaries"], counts["pending_turns"]) == (0, 0, 2)
        assert store.dense_search(RowScope("u"), emb.embed(["zq1a fact"])[0], 5) == []
        assert not (tmp_path / "m" / "journal.json").exists()
        commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
        assert_store_consistent(store)


def test_failure_between_tables_rolls_back_and_recommit_does_not_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashingEmbedder(64)
    store = open_store(tmp_path / "m", emb)
    store.append_turns(make_turns("u", 2, prefix="t"))
    real_add = store.tables.add

    def add(name: str, data: Any) -> None:
        if name == "summaries":
            raise OSError("injected fault")
        real_add(name, data)

    monkeypatch.setattr(store.tables, "add", add)  # this store's tables only
    with pytest.raises(OSError):
        commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
    store.close()
    with open_store(tmp_path / "m", emb) as store:
        counts = store.counts("u")
        assert (counts["segments"], counts["summaries"], counts["pending_turns"]) == (0, 0, 2)
        assert_store_consistent(store)
        commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
        commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
        assert store.counts("u")["segments"] == 1 and store.counts("u")["summaries"] == 1
        assert_store_consistent(store)


def test_interrupted_status_changes_are_completed_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashingEmbedder(64)
    store = open_store(tmp_path / "m", emb)
    _, (old,) = commit_texts(store, emb, "u", ["zq1a Alice lives in Paris"], segment_id="g1")
    _, (new,) = make_records(
        emb, "u", ["zq1b Alice lives in Berlin"], segment_id="g1", id_prefix="v2-"
    )
    with monkeypatch.context() as patch:
        # The new version and the status change are one LanceDB commit; the crash comes after
        # it, before Tantivy commits, and the process dies with the journal left behind.
        patch.setattr(LexicalIndex, "commit", _fail)
        patch.setattr(Recovery, "after_failure", _dies)
        with pytest.raises(OSError):
            store.apply_summary_changes(
                "u", [new], [StatusChange(summary_id=old.id, status=SummaryStatus.DELETED)]
            )
        store.close()
    with open_store(tmp_path / "m", emb) as store:
        assert [s.id for s in store.get_summaries("u")] == [new.id]
        assert store.lexical_search(RowScope("u"), "Paris", 5) == []
        assert [i for i, _ in store.lexical_search(RowScope("u", statuses=None), "Paris", 5)] == [
            old.id
        ]


def test_an_interrupted_withdraw_is_finished_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = HashingEmbedder(64)
    store = open_store(tmp_path / "m", emb)
    store.append_turns(make_turns("u", 4, prefix="t"))
    commit_texts(store, emb, "u", ["zq1a fact"], segment_id="g1", turn_ids=["t0", "t1"])
    commit_texts(store, emb, "u", ["zq2a fact"], segment_id="g2", turn_ids=["t2", "t3"])
    with monkeypatch.context() as patch:
        patch.setattr(LexicalIndex, "commit", _fail)  # rows gone, Tantivy not yet
        patch.setattr(Recovery, "after_failure", _dies)  # the process dies there
        with pytest.raises(OSError, match="injected"):
            store.withdraw("u", ["t2", "t3"], ["g2"])
        store.close()
    with open_store(tmp_path / "m", emb) as store:
        assert [t.id for t in store.get_turns("u")] == ["t0", "t1"]
        assert store.counts("u")["segments"] == 1
        assert store.lexical_search(RowScope("u"), "zq2a", 5) == []
        assert not (tmp_path / "m" / "journal.json").exists()
        assert_store_consistent(store)


@pytest.mark.parametrize("damage", ["delete_index", "stale_sync", "old_lexical_version"])
def test_lexical_index_rebuilt_on_open_when_it_disagrees(tmp_path: Path, damage: str) -> None:
    emb = HashingEmbedder(64)
    with open_store(tmp_path / "m", emb) as store:
        commit_texts(store, emb, "u", ["zq1a alpha", "zq1b beta"], segment_id="g1")
    if damage == "delete_index":
        shutil.rmtree(tmp_path / "m" / "tantivy")
    elif damage == "old_lexical_version":  # written by a hymem whose documents had other keys
        sync = tmp_path / "m" / "lexical_sync.json"
        record = json.loads(sync.read_text())
        assert record["lexical_schema_version"] == LEXICAL_SCHEMA_VERSION > 1
        sync.write_text(json.dumps({**record, "lexical_schema_version": 1}))
    else:  # LanceDB moved on without Tantivy (e.g. a crash right after the LanceDB write)
        with open_store(tmp_path / "m", emb) as store:
            store.tables.delete("summaries", "id = 'g1-s1'")  # bypasses Tantivy, on purpose
    with open_store(tmp_path / "m", emb) as store:
        assert_store_consistent(store)
        sync = json.loads((tmp_path / "m" / "lexical_sync.json").read_text())
        assert sync["lexical_schema_version"] == LEXICAL_SCHEMA_VERSION
        beta = [i for i, _ in store.lexical_search(RowScope("u"), "beta", 5)]
        assert beta == ([] if damage == "stale_sync" else ["g1-s1"])
        assert [i for i, _ in store.lexical_search(RowScope("u"), "alpha", 5)] == ["g1-s0"]


def test_reindex_rebuilds_from_lancedb(tmp_path: Path) -> None:
    emb = HashingEmbedder(64)
    with open_store(tmp_path / "m", emb) as store:
        commit_texts(store, emb, "u", ["zq1a alpha", "zq1b beta"], segment_id="g1")
        store._lex.rebuild([])  # wipe the lexical index behind the store's back (no API may)
        assert store.lexical_search(RowScope("u"), "alpha", 5) == []
        assert store.reindex() == {"summary": 2, "segment": 1}
        assert_store_consistent(store)
