"""Per-user write leases with expiry and fencing, for stores on an object store.

Many stateless workers share one s3:// store; at most one may write a given user at a time. A
local folder has its OS file lock; an object store has no locks, only conditional writes, so
each user gets a lease object `_hymem/leases/<sha256(user_id)[:40]>.json` holding
`{"user_id", "holder", "token", "expires_at", "released"}`, changed only by `create` and
`replace` against the etag just read.

Why a lease and not optimistic commits: one hymem commit spans several LanceDB tables and the
journal. LanceDB makes each table's commit atomic, but not the set; two workers committing one
user optimistically could interleave table by table. A lease makes the whole commit exclusive.

Fencing: every commit is preceded by `fence`, which extends the lease to now+ttl by a conditional
replace of the object version this manager wrote last. Another worker may take the lease over
only once it has expired, i.e. ttl after the last successful fence or renewal, and taking over
changes the object (token+1). So a commit that finishes within ttl of its fence cannot overlap
another writer's, and a writer paused past ttl (GC, suspended VM) whose lease was taken finds
the object changed at its next fence and gets `LeaseLostError` instead of writing.
`token` (+1 on every acquisition by anyone) tells a new holder whether someone else held the
user since it did: then `Lease.stale` is True and cached per-user state must be reloaded.

Clock assumption: expiry is written on the holder's clock and read on others'; hosts' clocks
must agree to well within ttl (NTP gives milliseconds; ttl is 30 s).

A heartbeat thread (`hymem-leases`, daemon) calls `tick()`: it renews held leases every ttl/3
and releases those idle for `linger_s`, so a worker that writes one user in bursts keeps the
lease between calls without holding it forever. A lease whose renewal fails is dropped and
logged; its holder's next `fence` takes it back when the object still names it with its token
(nobody held the user meanwhile, e.g. the renewal failed in an object-store outage), raises
`StoreUnavailableError` while the store is still down, and `LeaseLostError` saying what happened
(its renewal failed, then another worker, named, took it over) otherwise.

Fairness: a waiting writer leaves a note beside the lease (`lease_records.WaiterNotes`); a
holder that sees it at the end of a call releases at once, so a second writer gets the lease or
`StoreLockedError` within its `lease_wait_s` (one deadline for the whole wait).
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hymem.core.errors import LeaseLostError, StoreError, StoreLockedError
from hymem.core.logging import get_logger
from hymem.indexes.objects.lease_records import (
    FIRST_POLL_S,
    MAX_POLL_S,
    WANT_TTL_S,
    Grant,
    Lease,
    LeaseBody,
    UserState,
    WaiterNotes,
    lease_key,
)
from hymem.indexes.objects.objects import Objects

log = get_logger("hymem.indexes.objects.leases")


class LeaseManager:
    """Acquires, fences, renews and releases per-user leases for one holder.

    `holder` must be unique to this manager (e.g. host:pid:random): a lease that names it is
    treated as this manager's own, which is how a lease dropped after a failed renewal is
    taken back without waiting for its expiry."""

    def __init__(
        self,
        objects: Objects,
        *,
        holder: str,
        ttl_s: float = 30.0,
        wait_s: float = 60.0,
        linger_s: float = 2.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        heartbeat: bool = True,
    ) -> None:
        self.objects = objects
        self.holder = holder
        self._notes = WaiterNotes(objects, holder)
        self.ttl_s = ttl_s
        self.wait_s = wait_s
        self.linger_s = linger_s
        self._clock = clock
        self._sleep = sleep
        self._heartbeat = heartbeat
        self._lock = threading.Lock()
        self._users: dict[str, UserState] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._random = random.Random()

    # -- public ---------------------------------------------------------------------------

    @contextmanager
    def hold(self, user_id: str) -> Iterator[Lease]:
        """The user's lease for the duration of the block: acquired (or reused), marked busy so
        the heartbeat keeps it, idle again on exit. Re-entrant in a thread; threads of this
        process take turns on one user."""
        st = self._state(user_id)
        started = self._clock()
        if not st.gate.acquire(timeout=max(self.wait_s, 0.0)):
            raise StoreLockedError(
                f"user {user_id!r} is being written by another thread of this process; "
                f"waited {self.wait_s:g} s"
            )
        try:
            with self._lock:
                st.busy += 1
            try:
                # One lease_wait_s for the whole wait, the other thread's turn included.
                waited = max(0.0, self._clock() - started)
                yield self.acquire(user_id, wait_s=max(0.0, self.wait_s - waited))
            finally:
                with self._lock:
                    st.busy -= 1
                    st.idle_since = self._clock()
                    done = st.busy == 0
                if done and self.linger_s <= 0:
                    self.release(user_id)
                elif done:
                    self._let_waiter_in(user_id, st)
        finally:
            st.gate.release()

    def acquire(self, user_id: str, *, wait_s: float | None = None) -> Lease:
        """This user's lease: ours already, free, released or expired (taken over with token+1).
        Waits up to wait_s (default: the manager's) while another live holder has it, then
        raises StoreLockedError. While it waits, a note tells the holder to let it in at the
        end of the holder's current call (`want_key`)."""
        st = self._state(user_id)
        wait = self.wait_s if wait_s is None else wait_s
        with st.io:
            if st.grant is not None and self._still_ours(user_id, st):
                return self._lease(st.grant.body, stale=False)
            deadline = self._clock() + wait
            try:
                for attempt in itertools.count():
                    got = self._try_take(user_id, st)
                    if isinstance(got, Lease):
                        lease = got
                        break
                    remaining = deadline - self._clock()
                    if remaining <= 0:
                        raise StoreLockedError(
                            f"user {user_id!r} is being written by another worker "
                            f"({got.holder}, lease until {got.expires_at:.0f}); waited "
                            f"{self.wait_s:g} s (lease_wait_s)"
                        )
                    self._want(user_id, st)
                    delay = min(MAX_POLL_S, FIRST_POLL_S * 2 ** min(attempt, 10))
                    self._sleep(min(remaining, delay * self._random.uniform(0.5, 1.0)))
            finally:
                self._unwant(user_id, st)
        with self._lock:
            if st.busy == 0:  # a bare acquire() lingers from now, like the end of a hold()
                st.idle_since = self._clock()
        self._start_heartbeat()
        return lease

    def holding(self, user_id: str) -> bool:
        """Whether a `hold` block of this user is open: a write inside it must `fence` (and
        fail if the lease was lost meanwhile), never quietly take the lease again."""
        with self._lock:
            st = self._users.get(user_id)
            return st is not None and st.busy > 0

    def fence(self, user_id: str) -> Lease:
        """Extend our lease to now+ttl by a conditional write, right before a commit; raises
        LeaseLostError if someone took it over or we do not hold it."""
        st = self._state(user_id)
        with st.io:
            if st.grant is None:
                if not self._take_back(user_id, st):
                    raise LeaseLostError(self._lost_message(user_id, st))
            elif not self._renew(st):
                raise LeaseLostError(self._lost_message(user_id, st))
            assert st.grant is not None
            return self._lease(st.grant.body, stale=False)

    def release(self, user_id: str) -> None:
        """Mark our lease released (token kept, so continuity is known). Best effort: a conflict
        means it was taken over already, a store failure leaves it to expire."""
        self._release(user_id, only_idle=False)

    def tick(self) -> None:
        """One heartbeat: release leases idle for linger_s, renew the rest every ttl/3."""
        with self._lock:
            users = [(u, st) for u, st in self._users.items() if st.grant is not None]
        now = self._clock()
        for user_id, st in users:
            with self._lock:
                idle = st.busy == 0 and now - st.idle_since >= self.linger_s
            if idle:
                self._release(user_id, only_idle=True)
                continue
            with st.io:
                grant = st.grant
                if grant is None or now - grant.renewed_at < self.ttl_s / 3:
                    continue
                try:
                    renewed = self._renew(st)
                except StoreError as exc:
                    st.grant, renewed = None, False
                    st.lost = f"its renewal failed while the object store was unavailable ({exc})"
                    log.warning("lease.renew_failed", user_id=user_id, error=str(exc))
                if not renewed:
                    log.warning("lease.lost", user_id=user_id, token=grant.body.token)

    def close(self) -> None:
        """Stop the heartbeat and release every lease held."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.ttl_s)
        with self._lock:
            users = [u for u, st in self._users.items() if st.grant is not None]
        for user_id in users:
            self.release(user_id)

    # -- internals ------------------------------------------------------------------------

    def _take_back(self, user_id: str, st: UserState) -> bool:
        """A grant dropped after a failed renewal (an outage) is ours again if the lease object
        still names us with our token: nobody held the user since. Taken back by a conditional
        write; an object store still down raises StoreUnavailableError."""
        if st.last_token is None or st.lost is None:
            return False
        key = lease_key(user_id)
        cur = self.objects.get(key)
        prev = LeaseBody.decode(key, cur.data) if cur else None
        if cur is None or prev is None or prev.holder != self.holder:
            return False
        if prev.token != st.last_token or prev.released:
            return False
        now = self._clock()
        body = LeaseBody(user_id, self.holder, prev.token, now + self.ttl_s, released=False)
        etag = self._write(key, body, cur.etag)
        if etag is None:
            return False
        st.grant, st.lost = Grant(body, etag, now), None
        log.info("lease.taken_back", user_id=user_id, token=prev.token)
        return True

    def _lost_message(self, user_id: str, st: UserState) -> str:
        """What happened to a lease this writer no longer holds, as far as the object says."""
        try:
            cur = self.objects.get(lease_key(user_id))
            now = LeaseBody.decode(lease_key(user_id), cur.data) if cur else None
        except StoreError:
            now = None
        why = st.lost or "it expired"
        if st.last_token is None:
            what = "this worker does not hold it"
        elif now is not None and now.holder != self.holder:
            what = f"{why}, and another worker ({now.holder}) took it over"
        else:
            what = f"{why}, and it could not be taken back"
        return (
            f"the write lease on user {user_id!r} was lost ({what}); nothing was written; "
            "retrying re-acquires it"
        )

    def _want(self, user_id: str, st: UserState) -> None:
        """Leave (or refresh) this waiter's note for the holder. Best effort."""
        now = self._clock()
        if now - st.want_put < MAX_POLL_S:
            return
        if self._notes.put(user_id, now):
            st.want_put = now

    def _unwant(self, user_id: str, st: UserState) -> None:
        if st.want_put == float("-inf"):
            return
        st.want_put = float("-inf")
        self._notes.remove(user_id, self._clock())

    def _let_waiter_in(self, user_id: str, st: UserState) -> None:
        """After a call: a waiter's fresh note makes this holder release now and not take the
        lease back; looked for once per min(ttl/3, wait/4), so a burst pays one read."""
        now = self._clock()
        if now - st.want_checked < min(self.ttl_s / 3, self.wait_s / 4):
            return
        st.want_checked = now
        try:
            waiter = self._notes.waiter(user_id, now)
        except StoreError:
            return
        if waiter is None:
            return
        with self._lock:
            if st.busy > 0:
                return
        st.yield_until = now + WANT_TTL_S
        log.info("lease.yield", user_id=user_id, to=waiter)
        self.release(user_id)

    def _state(self, user_id: str) -> UserState:
        with self._lock:
            return self._users.setdefault(user_id, UserState())

    def _lease(self, body: LeaseBody, *, stale: bool) -> Lease:
        return Lease(body.user_id, body.token, body.expires_at, stale)

    def _release(self, user_id: str, *, only_idle: bool) -> None:
        st = self._state(user_id)
        with st.io:
            with self._lock:
                lingering = self._clock() - st.idle_since < self.linger_s
                if st.grant is None or (only_idle and (st.busy > 0 or lingering)):
                    return
            grant, st.grant = st.grant, None
            old = grant.body
            body = LeaseBody(old.user_id, old.holder, old.token, self._clock(), released=True)
            try:
                self.objects.replace(lease_key(user_id), body.encode(), grant.etag)
            except StoreError as exc:
                log.warning("lease.release_failed", user_id=user_id, error=str(exc))

    def _still_ours(self, user_id: str, st: UserState) -> bool:
        """Reuse a held grant; past its expiry only if a conditional renewal proves nobody
        took it over. Drops it otherwise."""
        assert st.grant is not None
        if self._clock() < st.grant.body.expires_at:
            return True
        try:
            return self._renew(st)
        except StoreError:
            st.grant = None
            raise

    def _renew(self, st: UserState) -> bool:
        """Conditional extension to now+ttl; False (and the grant dropped) on conflict."""
        assert st.grant is not None
        old = st.grant.body
        now = self._clock()
        body = LeaseBody(old.user_id, self.holder, old.token, now + self.ttl_s, released=False)
        etag = self._write(lease_key(old.user_id), body, st.grant.etag)
        st.grant = Grant(body, etag, now) if etag else None
        return etag is not None

    def _try_take(self, user_id: str, st: UserState) -> Lease | LeaseBody:
        """One attempt: our new Lease (recorded in st), or the body that stops us (a live
        holder, or the winner of a race we lost) to wait on and look again."""
        key = lease_key(user_id)
        now = self._clock()
        cur = self.objects.get(key)
        prev = LeaseBody.decode(key, cur.data) if cur else None
        takeable = prev is None or prev.released or prev.expires_at <= now
        if prev is not None and not takeable and prev.holder != self.holder:
            return prev
        if now < st.yield_until and takeable:
            waiter = self._notes.waiter(user_id, now)  # we let it in: it goes first while it waits
            if waiter is not None:
                return LeaseBody(user_id, waiter, 0, st.yield_until, released=False)
            st.yield_until = 0.0
        token = (prev.token if prev else 0) + 1
        body = LeaseBody(user_id, self.holder, token, now + self.ttl_s, released=False)
        etag = self._write(key, body, cur.etag if cur else None)
        if etag is None:
            return prev or body
        stale = st.last_token is None or prev is None or prev.token != st.last_token
        st.grant = Grant(body, etag, now)
        st.last_token = token
        return self._lease(body, stale=stale)

    def _write(self, key: str, body: LeaseBody, etag: str | None) -> str | None:
        """Conditional create/replace. A lost race is told apart from a write of ours whose
        answer was lost and retried (it then reads back as our exact bytes)."""
        data = body.encode()
        new = (
            self.objects.create(key, data)
            if etag is None
            else self.objects.replace(key, data, etag)
        )
        if new is None:
            cur = self.objects.get(key)
            if cur is not None and cur.data == data:
                return cur.etag
        return new

    def _start_heartbeat(self) -> None:
        with self._lock:
            if not self._heartbeat or self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._beat, name="hymem-leases", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        interval = max(0.05, min(self.ttl_s / 3, self.linger_s if self.linger_s > 0 else 1.0))
        while not self._stop.wait(interval):
            try:
                self.tick()
            except StoreError as exc:  # one bad round must not stop the heartbeat
                log.warning("lease.heartbeat_failed", error=str(exc))
