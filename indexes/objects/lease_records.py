"""What a lease looks like on the object store: its key, its JSON body, the note a waiting writer
leaves beside it, and what a manager keeps of a lease it holds (`leases.LeaseManager`)."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field

from hymem.core.errors import StoreCorruptedError, StoreError
from hymem.core.logging import get_logger
from hymem.indexes.objects.objects import Objects

log = get_logger("hymem.indexes.objects.leases")

LEASE_PREFIX = "_hymem/leases/"
FIRST_POLL_S = 0.05  # first wait for a busy lease; doubles, with jitter, up to MAX_POLL_S
MAX_POLL_S = 1.0
WANT_TTL_S = 4 * MAX_POLL_S  # a waiter's note stays fresh this long after its last poll


def lease_key(user_id: str) -> str:
    """The lease object's key: hashed, so any user id makes a valid, fixed-length key."""
    return f"{LEASE_PREFIX}{hashlib.sha256(user_id.encode()).hexdigest()[:40]}.json"


def want_key(user_id: str) -> str:
    """A waiting writer's note beside the lease: the holder lets it in at the end of its
    current call instead of keeping the lease for its next one (fairness)."""
    return lease_key(user_id)[: -len(".json")] + ".want.json"


@dataclass(frozen=True)
class Lease:
    user_id: str
    token: int  # fencing token: +1 on every acquisition by anyone
    expires_at: float  # unix seconds (holder's clock)
    stale: bool  # someone else held this user since this manager last did: reload cached state


@dataclass(frozen=True)
class LeaseBody:
    """The lease object's content."""

    user_id: str
    holder: str
    token: int
    expires_at: float
    released: bool

    def encode(self) -> bytes:
        return json.dumps(self.__dict__, sort_keys=True).encode()

    @classmethod
    def decode(cls, key: str, data: bytes) -> LeaseBody:
        try:
            raw = json.loads(data)
            return cls(
                str(raw["user_id"]),
                str(raw["holder"]),
                int(raw["token"]),
                float(raw["expires_at"]),
                bool(raw["released"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreCorruptedError(f"lease object {key} is not a lease: {exc}") from exc


@dataclass
class Grant:
    """A lease this manager holds: what it wrote and the etag to change it by."""

    body: LeaseBody
    etag: str
    renewed_at: float


@dataclass
class UserState:
    """What a manager keeps per user: its locks, its grant, and the waiter-note timers."""

    gate: threading.RLock = field(default_factory=threading.RLock)  # one hold() per process
    io: threading.Lock = field(default_factory=threading.Lock)  # one request on the object
    grant: Grant | None = None
    last_token: int | None = None  # the token this manager held last
    busy: int = 0
    idle_since: float = 0.0
    lost: str | None = None  # why the grant was dropped, when not by a takeover
    want_checked: float = float("-inf")  # when this holder last looked for a waiter's note
    want_put: float = float("-inf")  # when this waiter last wrote its note
    yield_until: float = 0.0  # this holder let a waiter in: it does not take the lease back


class WaiterNotes:
    """The notes waiting writers leave beside a lease (`want_key`), read and written best
    effort: a note that cannot be written or read only costs fairness, never safety."""

    def __init__(self, objects: Objects, holder: str) -> None:
        self._objects = objects
        self._holder = holder

    def put(self, user_id: str, now: float) -> bool:
        note = json.dumps({"holder": self._holder, "expires_at": now + WANT_TTL_S}).encode()
        try:
            self._objects.put(want_key(user_id), note)
            return True
        except StoreError as exc:
            log.info("lease.want_failed", user_id=user_id, error=str(exc))
            return False

    def remove(self, user_id: str, now: float) -> None:
        try:
            if self.waiter(user_id, now) is not None:
                return  # another waiter's note now: leave it
            self._objects.delete(want_key(user_id))
        except StoreError as exc:
            log.info("lease.want_failed", user_id=user_id, error=str(exc))

    def waiter(self, user_id: str, now: float) -> str | None:
        """The holder named by a fresh note of another waiter for this user, if any."""
        found = self._objects.get(want_key(user_id))
        if found is None:
            return None
        try:
            note = json.loads(found.data)
            holder, expires = str(note["holder"]), float(note["expires_at"])
        except (ValueError, KeyError, TypeError):
            return None
        if holder == self._holder or expires <= now:
            return None
        return holder


__all__ = [
    "FIRST_POLL_S",
    "LEASE_PREFIX",
    "MAX_POLL_S",
    "WANT_TTL_S",
    "Grant",
    "Lease",
    "LeaseBody",
    "UserState",
    "WaiterNotes",
    "lease_key",
    "want_key",
]
