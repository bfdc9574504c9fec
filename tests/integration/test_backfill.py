"""Bulk backfill on real LanceDB and Tantivy: a backfilled user holds exactly what `add()` and
`flush()` would have stored; a backfill killed part-way and run again stores every turn once;
a user holding other turns is refused, not merged; the CLI reads JSON Lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hymem import Memory
from hymem.backfill.histories import UserHistory
from hymem.cli import app
from hymem.core.types import TurnStatus
from hymem.testing import store_of
from typer.testing import CliRunner

from tests.backfill_job import histories, open_memory, snapshot

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def added(mem: Memory, history: UserHistory) -> None:
    for session in history.sessions:
        mem.add(
            session.messages,
            user_id=history.user_id,
            session_id=session.session_id,
            timestamp=session.timestamp,
        )
    mem.flush(user_id=history.user_id)


def test_a_backfilled_user_holds_what_add_and_flush_would_have_stored(tmp_path: Path) -> None:
    users = histories(3)
    with open_memory(str(tmp_path / "added")) as mem:
        for h in users:
            added(mem, h)
        expected = {h.user_id: snapshot(store_of(mem), h.user_id) for h in users}
    with open_memory(str(tmp_path / "filled")) as mem:
        report = mem.backfill(users)
        got = {h.user_id: snapshot(store_of(mem), h.user_id) for h in users}
        hits = mem.search("cello lessons", user_id="user-001")
    assert report.failed == {} and report.written_turns == 36 and report.pending == 0
    assert got == expected
    assert all(t[4] == "stored" for s in got.values() for t in s["turns"])
    assert hits and hits[0].user_id == "user-001"  # dense and lexical indexes hold it


def test_a_backfill_killed_part_way_and_run_again_stores_every_turn_once(
    tmp_path: Path,
) -> None:
    folder, users, marker = str(tmp_path / "m"), 24, tmp_path / "ready"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.backfill_job", folder, str(users), str(marker)],
        cwd=ROOT,
        env={**os.environ, "HYMEM_LOG_LEVEL": "error"},
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # three users in, the fourth's work or commit under way
    proc.wait(30)
    assert marker.exists(), "the backfill never got three users in"
    with open_memory(folder, read_only=True) as reader:
        stored = reader.stats()["turns"]
    assert 3 * 12 <= stored < users * 12, f"killed at {stored} turns: not part-way"
    with open_memory(folder) as mem:
        report = mem.backfill(histories(users))
        assert report.failed == {}
        assert 1 <= len(report.skipped) < users  # the first run's whole users were not redone
        with open_memory(str(tmp_path / "once")) as clean:
            clean.backfill(histories(users))
            for h in histories(users):
                assert snapshot(store_of(mem), h.user_id) == snapshot(store_of(clean), h.user_id)
        counts = mem.stats()
    assert counts["turns"] == users * 12 and counts["pending_turns"] == 0


def test_a_user_who_holds_other_turns_is_reported_and_left_as_it_was(tmp_path: Path) -> None:
    users = histories(2)
    with open_memory(str(tmp_path / "m")) as mem:
        mem.add("A turn of my own, before any backfill.", user_id="user-000")
        before = snapshot(store_of(mem), "user-000")
        report = mem.backfill(users)
        assert list(report.failed) == ["user-000"] and "already holds" in report.failed["user-000"]
        assert snapshot(store_of(mem), "user-000") == before
        assert {t.status for t in store_of(mem).get_turns("user-001")} == {TurnStatus.STORED}


def test_the_cli_backfills_json_lines_and_a_rerun_stores_nothing_twice(tmp_path: Path) -> None:
    source = tmp_path / "chats.jsonl"
    rows = [
        {"user_id": u, "session_id": "s1", "id": f"{u}-{i}", "role": r, "content": text}
        for u in ("ann", "bob")
        for i, (r, text) in enumerate(
            [("user", f"{u} moved to Porto last spring."), ("assistant", "Lovely city!")]
        )
    ]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    args = ["ingest", "jsonl", str(source), "--store", str(tmp_path / "m"), "--embedder", "hashing"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "wrote 4 turns" in first.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "wrote 0 turns" in again.output and "2 user(s) already stored" in again.output
