"""Webhooks without a network: Standard Webhooks signing and `verify`, the events each call
makes, backoff, endpoint validation, the SQLite outbox, and the docs' receiver block."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest
from hymem import MemoryConfig
from hymem.backfill.runner import BackfillReport
from hymem.core.errors import ConfigError
from hymem.core.time import utcnow
from hymem.core.types import AddResult, SummaryRecord
from hymem.imports.chat_import import ChatImportReport
from hymem.indexes.location import parse_location
from hymem.manage.erase import ErasureReport
from hymem.manage.portable import ImportReport
from hymem.ops.calls import CallRecord
from hymem.ops.webhooks import EVENT_TYPES, SignatureError, WebhookEndpoint, sign, verify
from hymem.ops.webhooks.backoff import retry_delay, schedule
from hymem.ops.webhooks.events import Event, events_of
from hymem.ops.webhooks.observer import outbox_path
from hymem.ops.webhooks.outbox import Due, Outbox
from hymem.ops.webhooks.signing import signature
from hymem.sleep.consolidator import SleepReport

from tests.doc_blocks import DOCS, blocks

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # the Standard Webhooks spec's test secret


# --- signing -------------------------------------------------------------------------------


def test_the_signature_is_the_standard_webhooks_reference_one() -> None:
    # The spec's published vector: any Standard Webhooks library verifies hymem's requests.
    got = signature(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}')
    assert got == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_verify_accepts_what_sign_made_and_returns_the_idempotency_key() -> None:
    body = b'{"id":"evt_1","type":"user.erased"}'
    headers = sign(SECRET, "evt_1", body)
    assert verify(SECRET, headers, body) == "evt_1"
    upper = {k.upper(): v for k, v in headers.items()}  # header names in any case
    assert verify(SECRET, upper, body.decode()) == "evt_1"
    rotated = {**headers, "webhook-signature": "v1,bm90IGl0 " + headers["webhook-signature"]}
    assert verify(SECRET, rotated, body) == "evt_1"  # one of several signatures matches


@pytest.mark.parametrize(
    "change",
    ["body", "secret", "id", "stale", "future", "missing", "not-a-number", "garbage-sig"],
)
def test_verify_refuses_anything_forged_stale_or_incomplete(change: str) -> None:
    body = b'{"id":"evt_1"}'
    headers = sign(SECRET, "evt_1", body)
    secret = SECRET
    if change == "body":
        body = b'{"id":"evt_2"}'
    elif change == "secret":
        secret = "another-secret-of-enough-bytes"
    elif change == "id":
        headers["webhook-id"] = "evt_2"
    elif change in ("stale", "future"):
        shift = -301 if change == "stale" else 301
        headers = sign(SECRET, "evt_1", body, timestamp=int(time.time()) + shift)
    elif change == "missing":
        del headers["webhook-signature"]
    elif change == "not-a-number":
        headers["webhook-timestamp"] = "yesterday"
    else:
        headers["webhook-signature"] = "v1,é∂ not base64"
    with pytest.raises(SignatureError):
        verify(secret, headers, body)


def test_a_plain_text_secret_is_used_as_its_bytes() -> None:
    plain = "a-plain-secret-of-24-bytes"
    headers = sign(plain, "evt_9", "{}", timestamp=1_700_000_000)
    assert verify(plain, headers, "{}", now=1_700_000_010) == "evt_9"
    assert headers["webhook-signature"] != signature(SECRET, "evt_9", 1_700_000_000, "{}")


# --- backoff -------------------------------------------------------------------------------


def test_backoff_doubles_with_jitter_and_stops_at_the_cap() -> None:
    lows = [retry_delay(n, base_s=5, cap_s=3600, rand=lambda: 0.0) for n in range(1, 13)]
    highs = [retry_delay(n, base_s=5, cap_s=3600, rand=lambda: 1.0) for n in range(1, 13)]
    assert highs[:4] == [5, 10, 20, 40]
    assert lows[:4] == [2.5, 5, 10, 20]  # never below half: no tight retry loop
    assert max(highs) == 3600 and highs[-1] == 3600
    assert retry_delay(10_000, base_s=5, cap_s=3600) <= 3600  # no overflow far out
    waits = schedule(12, base_s=5, cap_s=3600)
    assert len(waits) == 11 and 2 * 3600 < sum(waits) < 3 * 3600  # about 2.4 hours


# --- events --------------------------------------------------------------------------------


def call(name: str, result: object, **kwargs: object) -> CallRecord:
    user = kwargs.get("user_id")
    return CallRecord(name, user if isinstance(user, str) else None, 0.01, result, None, kwargs)


def summary(created_ago_s: float = 0.0, **fields: object) -> SummaryRecord:
    when = utcnow() - timedelta(seconds=created_ago_s)
    values: dict[str, object] = {
        "id": "sum-2",
        "user_id": "ann",
        "segment_id": "seg-1",
        "text": "Ann lives in Porto",
        "created_at": when,
        "updated_at": when,
        "memory_id": "sum-1",
        "previous_id": "sum-1",
        "version": 2,
        "origin": "user",
    }
    return SummaryRecord.model_validate({**values, **fields})


def test_a_commit_makes_one_event_and_pending_turns_make_none() -> None:
    pending = AddResult(turn_ids=["t1"], new_turn_ids=["t1"], pending=1)
    assert events_of(call("add", pending, user_id="ann")) == []
    wrote = AddResult(
        new_turn_ids=["t2"],
        segments_written=["seg-1"],
        summaries_written=["sum-1", "sum-2"],
        superseded=["sum-0"],
    )
    (event,) = events_of(call("add", wrote, user_id="ann", session_id="s7"))
    assert (event.type, event.user_id) == ("turns.committed", "ann")
    assert event.data["segment_ids"] == ["seg-1"] and event.data["session_id"] == "s7"
    assert event.data["counts"] == {"segments": 1, "summaries": 2}
    assert event.data["superseded"] == ["sum-0"] and event.data["turn_ids"] == ["t2"]
    (flushed,) = events_of(call("flush", wrote, user_id="ann"))
    assert "session_id" not in flushed.data and flushed.id != event.id


def test_failed_calls_and_reads_make_no_event() -> None:
    wrote = AddResult(segments_written=["seg-1"])
    failed = CallRecord("flush", "ann", 0.1, None, RuntimeError("boom"), {})
    assert events_of(failed) == []
    assert events_of(call("search", [], user_id="ann")) == []
    assert events_of(call("stats", wrote)) == []


def test_sleep_makes_an_event_only_when_it_changed_something() -> None:
    assert events_of(call("sleep", SleepReport(users=["ann"]))) == []
    dry = SleepReport(users=["ann"], new_versions=2, dry_run=True)
    assert events_of(call("sleep", dry)) == []
    report = SleepReport(users=["ann", "bob"], new_versions=1, superseded=1)
    (event,) = events_of(call("sleep", report))
    assert event.type == "summaries.changed" and event.user_id is None
    assert event.data["by"] == "sleep" and event.data["users"] == ["ann", "bob"]
    report = SleepReport(users=["ann"])
    report.facts.merged = 2  # the fact pass alone changed summaries
    (event,) = events_of(call("sleep", report, user_id="ann"))
    assert event.user_id == "ann" and event.data["facts"]["merged"] == 2


def test_user_edits_make_an_event_unless_nothing_changed() -> None:
    (event,) = events_of(call("update", summary(), user_id="ann"))
    assert event.type == "summaries.changed" and event.user_id == "ann"
    assert event.data == {
        "by": "user",
        "action": "update",
        "memory_id": "sum-1",
        "summary_id": "sum-2",
        "previous_id": "sum-1",
        "status": "active",
        "version": 2,
    }
    # an update to the same text returns the existing version: older than the call
    assert events_of(call("update", summary(created_ago_s=60), user_id="ann")) == []
    tomb = summary(status="deleted")
    assert events_of(call("delete", tomb, user_id="ann"))[0].data["status"] == "deleted"
    restored = summary(created_ago_s=3600, id="sum-1", previous_id=None, version=1)
    (event,) = events_of(call("restore", restored, user_id="ann"))
    assert event.data["action"] == "restore" and event.data["summary_id"] == "sum-1"


def test_erasure_and_imports_make_their_events() -> None:
    (erased,) = events_of(call("erase_user", ErasureReport(user_id="ann", turns=3)))
    assert (erased.type, erased.user_id, erased.data["turns"]) == ("user.erased", "ann", 3)
    records = ImportReport(user_id="bob", turns=4, segments=2, summaries=2)
    chat = ChatImportReport(user_id="cy", format="chatgpt", conversations=2, new_turns=9)
    bulk = BackfillReport(users=3, turns=30, written_turns=30, failed={"x": "bad"})
    got = [
        events_of(call(n, r))[0]
        for n, r in (("import_records", records), ("import_chat", chat), ("backfill", bulk))
    ]
    assert {e.type for e in got} == {"import.finished"}
    assert [e.data["kind"] for e in got] == ["records", "chat", "backfill"]
    assert [e.user_id for e in got] == ["bob", "cy", None]
    assert got[0].data["turns"] == 4 and got[1].data["new_turns"] == 9
    assert got[2].data["failed_users"] == ["x"] and got[2].data["users"] == 3


def test_the_body_is_the_documented_envelope_and_holds_no_text() -> None:
    event = Event("turns.committed", "ann", {"segment_ids": ["seg-1"]})
    payload = json.loads(event.body())
    assert list(payload) == ["id", "type", "created_at", "user_id", "data"]
    assert payload["id"] == event.id and payload["id"].startswith("evt_")
    assert payload["created_at"].endswith("Z") and event.body() == event.body()


# --- configuration -------------------------------------------------------------------------


def test_endpoints_default_to_every_event_and_env_json_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hooks = [{"url": "https://hooks.example.com/hymem", "secret": SECRET, "name": "crm"}]
    monkeypatch.setenv("HYMEM_WEBHOOKS", json.dumps(hooks))
    monkeypatch.setenv("HYMEM_WEBHOOK_TIMEOUT_S", "2.5")
    config = MemoryConfig()
    (endpoint,) = config.webhooks
    assert endpoint.events == list(EVENT_TYPES) and endpoint.key == "crm"
    assert endpoint.secret.get_secret_value() == SECRET and config.webhook_timeout_s == 2.5
    assert SECRET not in repr(config)  # a SecretStr: never printed
    assert MemoryConfig.defaults().webhooks == []


@pytest.mark.parametrize(
    ("endpoint", "words"),
    [
        ({"url": "ftp://example.com/x", "secret": SECRET}, "not an http:// or https:// URL"),
        ({"url": "https:///nohost", "secret": SECRET}, "with a host"),
        ({"url": "https://example.com", "secret": "short"}, "at least 16 bytes"),
        ({"url": "https://example.com", "secret": "whsec_***"}, "followed by base64"),
        ({"url": "https://e.com", "secret": SECRET, "events": ["turn.added"]}, "unknown event"),
        ({"url": "https://e.com", "secret": SECRET, "events": []}, "no event types"),
        ({"url": "https://e.com", "secret": SECRET, "retries": 3}, "retries"),
    ],
)
def test_a_bad_endpoint_is_a_config_error_that_names_it(
    endpoint: dict[str, object], words: str
) -> None:
    with pytest.raises(ConfigError, match="webhooks") as info:
        MemoryConfig.defaults(webhooks=[endpoint])
    assert words in str(info.value)
    assert SECRET not in str(info.value)  # the secret is never echoed back
    with pytest.raises(ConfigError, match="invalid webhook endpoint"):
        WebhookEndpoint(**endpoint)


def test_two_endpoints_under_one_name_and_bad_env_json_are_config_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    same = [{"url": "https://a.example.com", "secret": SECRET}] * 2
    with pytest.raises(ConfigError, match="two webhook endpoints are named"):
        MemoryConfig.defaults(webhooks=same)
    monkeypatch.setenv("HYMEM_WEBHOOKS", '[{"url": ')
    with pytest.raises(ConfigError, match="webhooks"):
        MemoryConfig()


def test_an_object_store_needs_an_outbox_file(tmp_path: Path) -> None:
    hooks = [{"url": "https://e.com/h", "secret": SECRET}]
    remote = parse_location("s3://bucket/mem", storage_options={"aws_region": "x"})
    with pytest.raises(ConfigError, match="HYMEM_WEBHOOK_OUTBOX"):
        outbox_path(MemoryConfig.defaults(webhooks=hooks), remote)
    given = MemoryConfig.defaults(webhooks=hooks, webhook_outbox=str(tmp_path / "o.db"))
    assert outbox_path(given, remote) == tmp_path / "o.db"
    local = parse_location(str(tmp_path / "mem"))
    assert outbox_path(MemoryConfig.defaults(webhooks=hooks), local) == (
        tmp_path / "mem" / "webhooks" / "outbox.sqlite3"
    )


# --- the outbox ----------------------------------------------------------------------------


def test_the_outbox_schedules_retries_kills_and_revives_rows(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.sqlite3")
    event = Event("user.erased", "ann", {"turns": 1})
    box.add(event, ["a", "b"])
    now = time.time() + 1
    due = box.next_due("a", now)
    assert due is not None and due.body == event.body() and due.attempts == 0
    box.failed(due, "HTTP 500", now, now + 60)
    assert box.next_due("a", now) is None  # its own schedule: not due for a minute
    assert box.next_attempt_at("a") == pytest.approx(now + 60)
    assert box.next_due("b", now) is not None  # the other endpoint is not held back
    later = box.next_due("a", now + 61)
    assert later is not None and later.attempts == 1
    box.failed(later, "timeout", now + 61, None)  # out of attempts
    (status_a, status_b) = box.status()
    assert (status_a.endpoint, status_a.dead, status_a.last_error) == ("a", 1, "timeout")
    assert (status_b.pending, status_b.delivered) == (1, 0)
    assert box.retry_dead() == 1 and box.next_due("a", time.time() + 1) is not None
    box.close()
    reopened = Outbox(tmp_path / "o.sqlite3")  # everything survives a reopen
    assert [r["state"] for r in reopened.rows()] == ["pending", "pending"]
    reopened.close()
    box.add(event, ["a"])  # a closed outbox takes nothing and raises nothing


def test_erasure_drops_the_users_settled_rows_and_pruning_old_delivered_ones(
    tmp_path: Path,
) -> None:
    box = Outbox(tmp_path / "o.sqlite3")
    sent, waiting, other = (Event("turns.committed", u, {}) for u in ("ann", "ann", "bob"))
    for event in (sent, waiting, other):
        box.add(event, ["a"])
    for event in (sent, other):
        box.delivered(Due(event.id, "a", 0, event.body()), time.time())
    erased = Event("user.erased", "ann", {})
    box.add(erased, ["a"])
    assert box.forget_user("ann", keep=erased.id) == 1
    left = {r["event_id"] for r in box.rows()}
    assert left == {waiting.id, other.id, erased.id}  # pending rows still go out
    assert box.prune(time.time() + 8 * 24 * 3600) == 1  # bob's delivered row, a week on
    assert {r["event_id"] for r in box.rows()} == {waiting.id, erased.id}
    box.close()


# --- the docs -------------------------------------------------------------------------------


def test_the_readme_receiver_verifies_refuses_and_deduplicates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (code,) = blocks("## Webhooks", page=DOCS / "operations.md")
    scope: dict[str, object] = {}
    exec(compile(code, "docs/operations.md#webhooks", "exec"), scope)
    receive = scope["receive"]
    assert callable(receive)
    secret = scope["SECRET"]
    assert isinstance(secret, str)
    body = Event("user.erased", "ann", {"turns": 1}).body().encode()
    headers = sign(secret, json.loads(body)["id"], body)
    assert receive(headers, body) == 204
    assert receive(headers, body) == 204  # a retry: answered, not processed twice
    assert capsys.readouterr().out.count("user.erased") == 1
    assert receive(headers, body.replace(b"ann", b"bob")) == 400
