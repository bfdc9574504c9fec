"""Issue 30: consolidation at write time, through `Memory` on a real folder store (LanceDB,
Tantivy, the extractive backend). A repeated fact leaves one active memory holding every turn
it rests on; a changed fact ends the old value at the time the new one was said, so current
questions read only the new value and questions as of an earlier moment read the old one; a
failure of the consolidation write loses nothing and leaves both for sleep."""

from __future__ import annotations

import errno
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import LLMUnavailable, StorageFullError, UserInputError
from hymem.core.types import AddResult, SummaryStatus
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of

pytestmark = pytest.mark.integration


def _memory(folder: Path, **settings: object) -> Memory:
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing", **settings)
    return Memory(folder, config=config, embedder=HashingEmbedder(64), create=True)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = _memory(tmp_path / "m")
    yield memory
    memory.close()


def _say(mem: Memory, text: str, when: str, session: str) -> None:
    mem.add([{"role": "user", "content": text}], user_id="dana", timestamp=when, session_id=session)
    mem.flush(user_id="dana")


def _active(mem: Memory, word: str) -> list[str]:
    items = mem.get_all(user_id="dana", limit=1000).items
    return [i.text for i in items if word.lower() in i.text.lower()]


def test_a_repeated_fact_stays_one_memory_holding_every_turn(mem: Memory) -> None:
    _say(mem, "I work at Acme as an engineer.", "2024-01-01T10:00:00", "s1")
    first = mem.search("works at Acme", user_id="dana", k=1)[0]
    _say(mem, "I work at Acme.", "2024-02-01T10:00:00", "s2")
    assert len(_active(mem, "Acme")) == 1
    item = mem.get(first.memory_id or "", user_id="dana")
    assert item.summary.status is SummaryStatus.ACTIVE and item.summary.memory_id == first.memory_id
    assert len(item.summary.source_turn_ids) == 2  # the repeat's turn was added to the survivor
    hit = mem.search("works at Acme", user_id="dana", k=1)[0]
    assert hit.memory_id == first.memory_id


def test_a_changed_fact_ends_the_old_value_when_the_new_one_was_said(mem: Memory) -> None:
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
    _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    assert _active(mem, "Lisbon") == [] and _active(mem, "Porto")
    old = next(
        s
        for s in mem.get_all(user_id="dana", status="superseded", limit=100).items
        if "Lisbon" in s.text
    )
    assert old.valid_to is not None and old.valid_to.isoformat().startswith("2024-03-01")
    now = " ".join(h.text for h in mem.context("Where does the user live?", user_id="dana"))
    assert "Porto" in now and "Lisbon" not in now
    then = mem.context("Where does the user live?", user_id="dana", as_of="2024-02-01")
    assert "Lisbon" in " ".join(h.text for h in then)
    assert "Porto" not in " ".join(h.text for h in then)
    hit = next(h for h in then if "Lisbon" in h.text)
    assert hit.valid_to is not None  # the hit says when its fact stopped holding
    back = mem.restore(old.id, user_id="dana")  # undo the supersession
    assert back.status is SummaryStatus.ACTIVE and back.valid_to is None


def test_an_older_value_written_late_is_stored_already_ended(mem: Memory) -> None:
    _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")  # an old chat imported late
    assert _active(mem, "Lisbon") == [] and _active(mem, "Porto")


def test_switched_off_both_values_stay_active_until_sleep(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "off", consolidate_on_write=False)
    try:
        _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
        _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
        assert _active(mem, "Lisbon") and _active(mem, "Porto")
    finally:
        mem.close()


def _say_later(mem: Memory, text: str, when: str, session: str) -> AddResult:
    mem.add([{"role": "user", "content": text}], user_id="dana", timestamp=when, session_id=session)
    return mem.flush(user_id="dana")


def test_the_flush_writes_its_consolidation_in_its_own_commit(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge and the supersession land in the flush's journaled commit: no second
    `apply_summary_changes` (a second commit cost the write path 20 %)."""
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
    separate: list[object] = []
    monkeypatch.setattr(store_of(mem), "apply_summary_changes", lambda *a, **k: separate.append(a))
    result = _say_later(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    assert separate == [] and len(result.superseded) == 1
    assert _active(mem, "Lisbon") == [] and _active(mem, "Porto")


def test_a_failed_consolidation_plan_loses_nothing(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The neighbour search fails (a full disk, say): the flush commits plainly, the pass
    after it fails the same way, and both values stay active for sleep."""
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")

    def full(*args: object, **kwargs: object) -> None:
        raise StorageFullError("no space left on device")

    monkeypatch.setattr(store_of(mem), "dense_search_many", full)
    result = _say_later(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    assert result.summaries_written and result.pending == 0  # the new summary is stored
    assert result.error is None and result.superseded == []
    assert _active(mem, "Lisbon") and _active(mem, "Porto")  # both, for sleep to reconcile


def test_a_commit_failing_after_its_changes_landed_puts_them_back(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flush's commit fails at its last step, after the old value was ended in LanceDB:
    the rollback gives the old value back, the new turn stays pending, and the next flush
    stores it and ends the old value once."""
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
    turns = store_of(mem)._turns  # type: ignore[attr-defined]  # folder store only
    real = turns.set_status
    calls = {"n": 0}

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(turns, "set_status", failing_once)
    failed = _say_later(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    assert failed.error and failed.pending == 1
    assert _active(mem, "Lisbon") and _active(mem, "Porto") == []  # as before the flush
    lisbon = mem.search("where does the user live", user_id="dana", k=5)
    assert any("Lisbon" in h.text for h in lisbon)  # served again, lexical index included
    retried = mem.flush(user_id="dana")
    assert retried.pending == 0 and len(retried.superseded) == 1
    assert _active(mem, "Lisbon") == [] and len(_active(mem, "Porto")) == 1
    ended = mem.get_all(user_id="dana", status="superseded", limit=100).items
    assert [s.text for s in ended if "Lisbon" in s.text] and len(ended) == 1


def test_while_a_sleep_holds_the_versions_lock_the_flush_consolidates_after_it(
    mem: Memory,
) -> None:
    """The flush never waits for the versions lock while it holds the user's lease (that
    would invert the lock order): it commits plainly, and consolidates once the lock is
    free, as before the fold."""
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
    lock = mem._guard.versions_lock  # type: ignore[attr-defined]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    timer = threading.Timer(0.3, release.set)
    timer.start()
    result = _say_later(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    holder.join(10)
    assert release.is_set() and len(result.superseded) == 1
    assert _active(mem, "Lisbon") == [] and _active(mem, "Porto")


def test_the_profile_lists_current_facts_and_follows_a_change_at_once(mem: Memory) -> None:
    assert mem.profile(user_id="dana").facts == []
    _say(mem, "I live in Lisbon. I work at Acme as an engineer.", "2024-01-01T10:00:00", "s1")
    _say(mem, "It rained all day, I watched a film.", "2024-01-02T10:00:00", "s2")
    before = mem.profile(user_id="dana")
    assert "Lisbon" in before.text and "Acme" in before.text and "rained" not in before.text
    _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s3")
    after = mem.profile(user_id="dana")
    assert "Porto" in after.text and "Lisbon" not in after.text
    assert {f.fact_key for f in after.facts} == {"user|lives_in", "user|works_at"}
    one = mem.profile(user_id="dana", max_tokens=12)
    assert len(one.facts) == 1 and one.left_out == 1 and one.tokens <= 12
    with pytest.raises(UserInputError):
        mem.profile(user_id="dana", max_tokens=0)


def test_sleep_reads_missing_fact_keys_and_ends_the_older_value(tmp_path: Path) -> None:
    """What a crash before consolidation, or a store upgraded from before fact keys, leaves
    (two active values, no keys) is repaired by sleep's fact pass, before any model."""
    folder = tmp_path / "later"
    mem = _memory(folder, consolidate_on_write=False)
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
    _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    _blank_keys(mem)
    assert {r.fact_key for r in store_of(mem).get_summaries("dana")} == {None}
    mem.close()
    mem = _memory(folder)
    try:
        report = mem.sleep(user_id="dana")
        assert (report.facts.keyed, report.facts.superseded) == (2, 1)
        assert _active(mem, "Lisbon") == [] and _active(mem, "Porto")
        assert "Porto" in mem.profile(user_id="dana").text
        again = mem.sleep(user_id="dana")
        assert (again.facts.keyed, again.facts.superseded, again.facts.merged) == (0, 0, 0)
    finally:
        mem.close()


def _blank_keys(mem: Memory) -> None:
    """Stored keys set to NULL, as a schema-5 upgrade leaves them."""
    from hymem.indexes.lance import schema as S

    table = store_of(mem).tables.table(S.SUMMARIES)  # type: ignore[attr-defined]  # folder store only
    table.update(where="fact_key IS NOT NULL", values_sql={"fact_key": "NULL"})
    store_of(mem).dense_cache.invalidate("dana")  # type: ignore[attr-defined]  # folder store only


def test_audit_profile_over_the_cli_and_sleep_repairs_what_the_audit_flags(
    tmp_path: Path,
) -> None:
    """`hymem audit` reports a contradiction that consolidation was off for (exit 1), `sleep`
    repairs it, and the audit is then healthy (exit 0); `hymem profile` lists the fact."""
    from hymem.cli import app
    from typer.testing import CliRunner

    folder = tmp_path / "cli"
    mem = _memory(folder, consolidate_on_write=False)
    _say(mem, "I live in Lisbon.", "2024-01-01T10:00:00", "s1")
    _say(mem, "I live in Porto now.", "2024-03-01T10:00:00", "s2")
    report = mem.audit(user_id="dana")
    assert report.users[0].contradictions and not report.healthy
    mem.close()
    runner = CliRunner()
    args = ["-s", str(folder), "--embedder", "hashing:64"]
    res = runner.invoke(app, ["audit", "--user", "dana", "--json", *args])
    assert res.exit_code == 1, res.output
    assert '"contradictions"' in res.output
    mem = _memory(folder)
    mem.sleep(user_id="dana")
    mem.close()
    res = runner.invoke(app, ["audit", *args])
    assert res.exit_code == 0, res.output
    assert "dana" in res.output
    res = runner.invoke(app, ["profile", "--user", "dana", *args])
    assert res.exit_code == 0 and "Porto" in res.output and "Lisbon" not in res.output


def _model_memory(folder: Path, update: object) -> tuple[Memory, Any]:
    from tests.doubles import ScriptedRoles

    roles = ScriptedRoles(update=update)  # type: ignore[arg-type]  # a reply callable or list
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing")
    return Memory(folder, config=config, embedder=HashingEmbedder(64), roles=roles), roles


PARTY = "The garden party was lovely with music and lanterns."
PARTY_MORE = "The garden party was lovely with music and lanterns and a band."


@pytest.mark.parametrize(
    ("reply", "active_after"),
    [
        ({"action": "update", "text": "The garden party had music, lanterns and a band."}, 1),
        ({"action": "delete", "reason": "the newer one replaces it"}, 1),
        ({"action": "ignore"}, 2),
        (LLMUnavailable("down", role="update"), 2),
    ],
)
def test_with_a_model_the_update_role_decides_what_the_rules_leave(
    tmp_path: Path, reply: Any, active_after: int
) -> None:
    mem, roles = _model_memory(tmp_path / "m", [reply])
    try:
        _say(mem, PARTY, "2024-01-01T10:00:00", "s1")
        _say(mem, PARTY_MORE, "2024-01-02T10:00:00", "s2")
        assert len(roles.updates()) == 1  # asked once: the new summary against its nearest
        active = _active(mem, "garden party")
        assert len(active) == active_after
        if isinstance(reply, dict) and reply["action"] == "update":
            assert active == [reply["text"]]
    finally:
        mem.close()


def test_a_neighbour_this_writer_committed_is_not_read_back(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repeat's neighbour was written by this writer a flush before: its row comes from
    what the writer kept (vouched for by the store's cached row), not a LanceDB read (~20 ms
    a flush, most of what consolidation cost the live write path)."""
    said = "We watched a long documentary about humpback whales."  # states no fact
    _say(mem, said, "2024-01-01T10:00:00", "s1")
    mem.search("whales", user_id="dana", k=1)  # the store's cache holds the user's rows
    reads: list[object] = []
    read = store_of(mem).get_summaries

    def counted(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("ids"):
            reads.append(kwargs["ids"])
        return read(*args, **kwargs)

    monkeypatch.setattr(store_of(mem), "get_summaries", counted)
    result = _say_later(mem, said, "2024-02-01T10:00:00", "s2")
    assert len(result.merged) == 1 and reads == []
    assert len(_active(mem, "whales")) == 1
