"""The durable outbox: a local SQLite file holding every event until each endpoint has it.

An event is written here, fsync'd (WAL, `synchronous=FULL`), before the call that made it
returns, so a process killed a moment later still delivers it when the store is opened
again. Delivery state is one row per (event, endpoint): `pending` (with its attempts, the
time of its next attempt and the last error), `delivered`, or `dead` (out of attempts: kept,
listed by `hymem webhooks`, sent again by `hymem webhooks --retry-dead`).

The file is local on purpose: a write never waits on the network for it, and SQLite's
locking needs a local disk. On an object store each worker keeps its own outbox file
(`MemoryConfig.webhook_outbox`) and delivers the events of its own calls.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hymem.ops.webhooks.events import Event

SCHEMA_VERSION = 1
DELIVERED_KEEP_S = 7 * 24 * 3600.0  # delivered rows stay this long, for `hymem webhooks`
BUSY_TIMEOUT_S = 5.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    user_id TEXT,
    created_at REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
    event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL,
    last_attempt_at REAL,
    last_error TEXT,
    delivered_at REAL,
    PRIMARY KEY (event_id, endpoint)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (endpoint, state, next_attempt_at);
"""


@dataclass(frozen=True)
class Due:
    """A pending delivery handed to the deliverer: the event's id and stored body, and how
    many attempts it has had."""

    event_id: str
    endpoint: str
    attempts: int
    body: str


@dataclass(frozen=True)
class EndpointStatus:
    """One endpoint's rows, for `hymem webhooks`."""

    endpoint: str
    pending: int
    delivered: int
    dead: int
    last_error: str | None
    last_error_at: float | None
    next_attempt_at: float | None
    oldest_pending_at: float | None


class Outbox:
    """One SQLite connection shared by the calling threads (which add events) and the
    delivery threads (which take and settle them), behind one lock: every statement is
    local and short, and no lock is held across a network call."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # each commit is on disk when it returns
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA secure_delete=ON")  # an erased user's rows are overwritten
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection | None]:
        """The connection inside one write transaction (None once closed: nothing to do)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                yield None
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def add(self, event: Event, endpoints: Sequence[str]) -> None:
        """Store `event` with one pending delivery per endpoint, due now; durable on return."""
        now = time.time()
        with self._tx() as conn:
            if conn is None:
                return
            conn.execute(
                "INSERT INTO events (id, type, user_id, created_at, body) VALUES (?, ?, ?, ?, ?)",
                (event.id, event.type, event.user_id, event.created_at.timestamp(), event.body()),
            )
            conn.executemany(
                "INSERT INTO deliveries (event_id, endpoint, next_attempt_at) VALUES (?, ?, ?)",
                [(event.id, endpoint, now) for endpoint in endpoints],
            )

    def next_due(self, endpoint: str, now: float) -> Due | None:
        """The endpoint's pending delivery whose time has come, earliest first."""
        with self._lock:
            if self._conn is None:
                return None
            row = self._conn.execute(
                "SELECT d.event_id, d.attempts, e.body FROM deliveries d"
                " JOIN events e ON e.id = d.event_id"
                " WHERE d.endpoint = ? AND d.state = 'pending' AND d.next_attempt_at <= ?"
                " ORDER BY d.next_attempt_at, e.created_at LIMIT 1",
                (endpoint, now),
            ).fetchone()
        return None if row is None else Due(row[0], endpoint, int(row[1]), row[2])

    def next_attempt_at(self, endpoint: str) -> float | None:
        """When the endpoint's next pending delivery is due (None: nothing pending)."""
        with self._lock:
            if self._conn is None:
                return None
            row = self._conn.execute(
                "SELECT MIN(next_attempt_at) FROM deliveries"
                " WHERE endpoint = ? AND state = 'pending'",
                (endpoint,),
            ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def delivered(self, due: Due, now: float) -> None:
        with self._tx() as conn:
            if conn is not None:
                conn.execute(
                    "UPDATE deliveries SET state = 'delivered', attempts = attempts + 1,"
                    " last_attempt_at = ?, delivered_at = ? WHERE event_id = ? AND endpoint = ?",
                    (now, now, due.event_id, due.endpoint),
                )

    def failed(self, due: Due, error: str, now: float, retry_at: float | None) -> None:
        """Count a failed attempt; `retry_at` None makes the row dead."""
        state = "pending" if retry_at is not None else "dead"
        with self._tx() as conn:
            if conn is not None:
                conn.execute(
                    "UPDATE deliveries SET state = ?, attempts = attempts + 1,"
                    " last_attempt_at = ?, last_error = ?, next_attempt_at = ?"
                    " WHERE event_id = ? AND endpoint = ?",
                    (state, now, error[:500], retry_at or now, due.event_id, due.endpoint),
                )

    def retry_dead(self, endpoint: str | None = None) -> int:
        """Make dead rows pending again, due now, with a fresh count of attempts."""
        where = "state = 'dead'" + (" AND endpoint = ?" if endpoint is not None else "")
        args: tuple[object, ...] = (time.time(),) + ((endpoint,) if endpoint is not None else ())
        with self._tx() as conn:
            if conn is None:
                return 0
            cur = conn.execute(
                "UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?"
                f" WHERE {where}",
                args,
            )
            return cur.rowcount

    def prune(self, now: float, keep_s: float = DELIVERED_KEEP_S) -> int:
        """Drop delivered rows older than `keep_s`, and events no row refers to any more."""
        with self._tx() as conn:
            if conn is None:
                return 0
            cur = conn.execute(
                "DELETE FROM deliveries WHERE state = 'delivered' AND delivered_at < ?",
                (now - keep_s,),
            )
            conn.execute("DELETE FROM events WHERE id NOT IN (SELECT event_id FROM deliveries)")
            return cur.rowcount

    def forget_user(self, user_id: str, *, keep: str) -> int:
        """After an erasure: drop the user's delivered and dead rows and their events (the
        `keep` event, the erasure's own, stays until delivered); rows still pending stay so
        receivers hear of every change before the erasure."""
        with self._tx() as conn:
            if conn is None:
                return 0
            cur = conn.execute(
                "DELETE FROM deliveries WHERE state != 'pending' AND event_id IN"
                " (SELECT id FROM events WHERE user_id = ? AND id != ?)",
                (user_id, keep),
            )
            conn.execute(
                "DELETE FROM events WHERE user_id = ? AND id != ?"
                " AND id NOT IN (SELECT event_id FROM deliveries)",
                (user_id, keep),
            )
            removed = cur.rowcount
        with self._lock:
            if self._conn is not None:  # the deleted pages leave the write-ahead log too
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def status(self) -> list[EndpointStatus]:
        """Per endpoint found in the file: counts by state, the latest error, what is next."""
        with self._lock:
            if self._conn is None:
                return []
            rows = self._conn.execute(
                "SELECT d.endpoint,"
                " SUM(d.state = 'pending'), SUM(d.state = 'delivered'), SUM(d.state = 'dead'),"
                " MIN(CASE WHEN d.state = 'pending' THEN d.next_attempt_at END),"
                " MIN(CASE WHEN d.state = 'pending' THEN e.created_at END)"
                " FROM deliveries d JOIN events e ON e.id = d.event_id GROUP BY d.endpoint"
                " ORDER BY d.endpoint"
            ).fetchall()
            errors = {
                r[0]: (r[1], r[2])
                for r in self._conn.execute(
                    "SELECT endpoint, last_error, MAX(last_attempt_at) FROM deliveries"
                    " WHERE last_error IS NOT NULL GROUP BY endpoint"
                )
            }
        return [
            EndpointStatus(
                endpoint=r[0],
                pending=int(r[1]),
                delivered=int(r[2]),
                dead=int(r[3]),
                last_error=errors.get(r[0], (None, None))[0],
                last_error_at=errors.get(r[0], (None, None))[1],
                next_attempt_at=r[4],
                oldest_pending_at=r[5],
            )
            for r in rows
        ]

    def rows(self, *, state: str | None = None) -> list[dict[str, object]]:
        """Every delivery row with its event's type and user (tests and `--dead` listings)."""
        query = (
            "SELECT d.event_id, d.endpoint, d.state, d.attempts, d.last_error, e.type, e.user_id,"
            " e.body FROM deliveries d JOIN events e ON e.id = d.event_id"
        )
        args: tuple[str, ...] = ()
        if state is not None:
            query, args = query + " WHERE d.state = ?", (state,)
        names = ("event_id", "endpoint", "state", "attempts", "last_error", "type", "user_id")
        with self._lock:
            if self._conn is None:
                return []
            found = self._conn.execute(query + " ORDER BY e.created_at", args).fetchall()
        return [{**dict(zip(names, r[:7], strict=True)), "body": r[7]} for r in found]

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


__all__ = ["DELIVERED_KEEP_S", "Due", "EndpointStatus", "Outbox"]
