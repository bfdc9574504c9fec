"""An add whose turns commit met an object-store outage: the store may not have told whether
the commit landed. `append_landed` reads the turns table once the store answers again and
settles it, or says the outcome is unknown and how a retry stores each turn once."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from hymem.core.errors import StoreUnavailableError
from hymem.core.logging import get_logger
from hymem.core.types import TurnRecord
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.store.faults import RETRY_HINT, storage_faults

log = get_logger("hymem.indexes.store.store")

# How long an add whose turns commit met an outage waits for the store to answer again, to
# learn whether the turns landed, before it reports the outcome as unknown.
APPEND_RESOLVE_S = 15.0
APPEND_RESOLVE_POLL_S = 1.0
UNKNOWN_APPEND = (
    "the object store stopped answering during the commit and did not answer again in time, "
    "so whether these turns were stored is unknown; retry the same add() once the store is "
    "back: messages with ids are stored once by id, and an add() sent again with the same "
    "request_id is recognised as a retry"
)


def append_landed(
    path: Path | str,
    lance: LanceTables,
    turns: TurnLog,
    new: Sequence[TurnRecord],
    exc: StoreUnavailableError,
) -> bool:
    """True: every turn landed, the add succeeded. False: none did, the error stands as it
    is. Still unreadable after APPEND_RESOLVE_S (or partly there, which one commit cannot be):
    StoreUnavailableError saying the outcome is unknown and how a retry stores each turn once."""
    deadline = time.monotonic() + APPEND_RESOLVE_S
    while True:
        try:
            with storage_faults(path, "reading turns"):
                lance.refresh()
                found = turns.count_present(new)
            if found == len(new):
                log.warning("store.append_resolved", landed=True, turns=len(new))
                return True
            if found == 0:
                log.warning("store.append_resolved", landed=False, turns=len(new))
                return False
        except StoreUnavailableError:
            pass
        if time.monotonic() >= deadline:
            break
        time.sleep(APPEND_RESOLVE_POLL_S)
    failure = str(exc).replace(f"; this is transient: {RETRY_HINT}", "")
    raise StoreUnavailableError(
        f"appending turns to {path}: {UNKNOWN_APPEND} (the failure: {failure})"
    ) from exc


__all__ = ["APPEND_RESOLVE_POLL_S", "APPEND_RESOLVE_S", "UNKNOWN_APPEND", "append_landed"]
