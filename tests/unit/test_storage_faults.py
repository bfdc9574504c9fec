"""How raw storage failures become hymem errors: a full disk, damage, and (object stores) an
outage or a commit other writers kept pre-empting, which is transient and never "damage"."""

from __future__ import annotations

import pytest
from hymem.core.errors import StorageFullError, StoreCorruptedError, StoreUnavailableError
from hymem.indexes.store.faults import storage_faults

CASES = [
    (
        RuntimeError(
            "lance error: Too many concurrent writers. Failed to commit transaction after 20 "
            "retries within retry_timeout of 30s"
        ),
        StoreUnavailableError,
    ),
    (
        OSError(
            "lance error: Retryable commit conflict for version 12: This Rewrite transaction "
            "was preempted by concurrent transaction Update at version 12"
        ),
        StoreUnavailableError,
    ),
    (
        OSError(
            "LanceError(IO): Generic S3 error: Error performing GET http://127.0.0.1:1/b/x after "
            "2 retries, max_retries: 2 - Server returned non-2xx status code: 503 Service "
            "Unavailable"
        ),
        StoreUnavailableError,
    ),
    (OSError("lance error: Not found: /m/lance/turns.lance/data/x.lance"), StoreCorruptedError),
    (OSError(28, "No space left on device"), StorageFullError),
]


@pytest.mark.parametrize(("raw", "typed"), CASES)
def test_raw_failures_become_typed_errors(raw: Exception, typed: type[Exception]) -> None:
    with pytest.raises(typed) as caught, storage_faults("s3://b/m", "appending turns"):
        raise raw
    assert "appending turns failed" in str(caught.value)
    if typed is StoreUnavailableError:
        assert "transient" in str(caught.value) and "damaged" not in str(caught.value)


def test_other_errors_pass_through_unchanged() -> None:
    with pytest.raises(KeyError), storage_faults("s3://b/m", "reading"):
        raise KeyError("x")
