"""The backfill on a real local Ray runtime (two actors): the users it stores are exactly those
the in-process backfill stores, and a user whose preparation fails on a worker is reported
while the others are stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem.backfill.histories import Session, UserHistory
from hymem.testing import store_of

from tests.backfill_job import histories, open_memory, snapshot

pytestmark = pytest.mark.integration

pytest.importorskip("ray", reason="the Ray runner needs hymem[ray]")


def test_two_ray_workers_store_what_the_in_process_backfill_stores(tmp_path: Path) -> None:
    users = histories(6)
    bad = UserHistory("user-bad", [Session("s1", [{"text": "hello"}], "not a time")])
    with open_memory(str(tmp_path / "local")) as mem:
        mem.backfill(users)
        expected = {h.user_id: snapshot(store_of(mem), h.user_id) for h in users}
    with open_memory(str(tmp_path / "ray")) as mem:
        report = mem.backfill([*users, bad], ray="local", workers=2)
        got = {h.user_id: snapshot(store_of(mem), h.user_id) for h in users}
        again = mem.backfill(users, ray="local", workers=2)
    assert report.runner == "ray" and report.workers == 2
    assert report.written_turns == 6 * 12
    assert list(report.failed) == ["user-bad"] and "time" in report.failed["user-bad"]
    assert got == expected
    assert sorted(again.skipped) == sorted(h.user_id for h in users)
