"""The erase fence alone (`hymem.read.fence`): a user's reads are refused while the user is
erased, an erase waits for the reads already running, and other users are never held."""

from __future__ import annotations

import threading

import pytest
from hymem.core.errors import CommitConflictError, ErasureInProgressError
from hymem.read.fence import EraseFence


def test_reads_of_a_user_being_erased_are_refused_and_others_go_on() -> None:
    fence = EraseFence()
    with fence.erasing("alice"):
        with (
            pytest.raises(ErasureInProgressError, match="'alice' is being erased"),
            fence.reading("alice"),
        ):
            pytest.fail("the read ran")
        with fence.reading("bob"):
            pass
    with fence.reading("alice"):  # the erase is over: a new read starts afresh
        pass
    assert issubclass(ErasureInProgressError, CommitConflictError)  # a 409, as a conflict


def test_an_erase_waits_for_the_reads_already_running() -> None:
    fence = EraseFence()
    reading, release, erased = threading.Event(), threading.Event(), threading.Event()

    def read() -> None:
        with fence.reading("alice"):
            reading.set()
            release.wait(10)

    def erase() -> None:
        with fence.erasing("alice"):
            erased.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert reading.wait(10)
    eraser = threading.Thread(target=erase)
    eraser.start()
    assert not erased.wait(0.2)  # held by the read in flight
    with pytest.raises(ErasureInProgressError), fence.reading("alice"):
        pass  # while it waits, new reads are refused
    release.set()
    assert erased.wait(10)
    for t in (reader, eraser):
        t.join(10)
        assert not t.is_alive()
