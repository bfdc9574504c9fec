"""A trace another worker writes while an erase runs: two workers (two `Memory` objects, as two
processes have) on one store on a real S3-compatible server (moto on 127.0.0.1), real LanceDB,
obstore and Tantivy. The other worker's fence does not know of this worker's erase, so its ask
of the user may end (and write its trace) after the rows were deleted; the erase's final sweep
must find that trace and erase it too, bytes included."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest
from hymem.indexes.store.erasure import Eraser

from tests.fixtures_s3 import REGION, S3Target
from tests.s3_workers import open_memory

pytestmark = pytest.mark.integration


def _keys_holding(target: S3Target, needle: bytes) -> list[str]:
    s3: Any = boto3.client(
        "s3",
        endpoint_url=target.endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=target.bucket):
        for obj in page.get("Contents", []):
            body = s3.get_object(Bucket=target.bucket, Key=obj["Key"])["Body"].read()
            if needle in body:
                found.append(obj["Key"])
    return found


def test_a_trace_another_worker_writes_during_the_erase_is_swept(
    s3_store: S3Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = f"zq{uuid.uuid4().hex}"
    args = (s3_store.uri, s3_store.storage_options)
    with (
        open_memory(*args, str(tmp_path / "a"), lease_linger_s=0.0) as eraser,
        open_memory(*args, str(tmp_path / "b")) as other,
    ):
        eraser.add(f"My locker code is {canary}.", user_id="alice")
        eraser.flush(user_id="alice")
        eraser.add("I keep bees.", user_id="bob")
        eraser.flush(user_id="bob")
        real_finish = Eraser.finish
        late: list[str] = []

        def finish_then_other_worker_asks(self: Eraser, user_id: str) -> dict[str, int]:
            removed = real_finish(self, user_id)
            if not late:  # the other worker's ask ends now: its trace lands after the purge
                answer = other.ask(f"what is my locker code {canary}?", user_id="alice")
                late.append(answer.trace_id)
                assert [t.trace_id for t in other.traces(user_id="alice")] == late
            return removed

        monkeypatch.setattr(Eraser, "finish", finish_then_other_worker_asks)
        report = eraser.erase_user("alice")
        assert late and report.traces == 1 and report.turns == 1
    with open_memory(*args, str(tmp_path / "check")) as mem:
        assert mem.traces(user_id="alice") == []
        assert mem.stats(user_id="alice") == mem.stats(user_id="nobody")
        assert mem.stats(user_id="bob")["turns"] == 1
    assert _keys_holding(s3_store, canary.encode()) == []
