"""The write path: turns -> durable pending turns -> (compression) -> topic segments ->
short-term buffer -> one summariser call per buffer -> Level-1 summaries linked to Level-2
segments, committed through `Commits.commit_segments`.

Durability: `add` takes the whole call checked at the edge (`hymem.write.request.AddRequest`)
and writes every turn as `pending` in one `append_turns` batch before any model runs. The
short-term buffer is the set of pending turns in the store; the writer keeps a view of it
(`PendingTurns`) that is reloaded whenever a write fails, so a crash can lose nothing. Flushing
the buffer (planning, summarising, committing, and what happens when the model summariser
fails) is `hymem.write.flusher.Flusher`'s; its result and the write-time consolidation's are
combined into the call's `AddResult` at one point (`hymem.write.parts.add_result`).

Work is done once: a turn is embedded once (when its buffer may flush, not on every add); a
segment's vector is the normalised mean of its turns' vectors rather than a second embedding of
the same text (which MiniLM would also truncate at 256 word pieces); a summary taken from a
turn's sentence is pooled from that turn's token vectors (`summary_vectors`), and only the
others are embedded at commit time, in one batch; and an add whose single-session buffer cannot
reach `th` tokens plans nothing (`buffer.may_flush`), nor, once full, one whose last plan
stored nothing until a few more turns arrived (`buffer.plan_due`). Ids are deterministic (turns:
the caller's id or a hash of user, session, seq and text; segments: a hash of user and turn ids;
summaries: a hash of segment id and index), so re-committing after a crash replaces rather than
duplicates.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hymem.core.config import MemoryConfig
from hymem.core.logging import get_logger
from hymem.core.time import Clock, utcnow
from hymem.core.types import AddResult, TurnRecord, TurnStatus
from hymem.embed.embedders import Embedder
from hymem.llm.roles import RolesProvider
from hymem.write.blas import one_blas_thread
from hymem.write.consolidate import WriteConsolidation
from hymem.write.flusher import Flusher
from hymem.write.guard import WriteGuard
from hymem.write.parts import Flushed, add_result
from hymem.write.pending import PendingTurns, repeats_last_call, repeats_request
from hymem.write.ports import WriteStore
from hymem.write.prepare import BufferPrep
from hymem.write.records import call_turn_ids, pending_records, request_turn_id
from hymem.write.request import AddRequest
from hymem.write.stripes import UserStripes
from hymem.write.summary_vectors import SummaryVectors

log = get_logger("hymem.write.ingestor")


class Ingestor:
    """Owns the write path of one Memory; thread-safe (one write at a time per process).
    Built with what the write path touches: the store, the embedder, the roles (`summarise`
    only, on flush), the config, a clock and the store's `WriteGuard` (its own by default),
    under which every add and flush runs. The compressor resolves on the first flush."""

    def __init__(
        self,
        store: WriteStore,
        embedder: Embedder,
        roles: RolesProvider,
        config: MemoryConfig,
        *,
        clock: Clock = utcnow,
        guard: WriteGuard | None = None,
    ) -> None:
        self._store, self._embedder, self._roles = store, embedder, roles
        self._config, self._clock = config, clock
        self._lock = threading.RLock()
        self._stripe = UserStripes()  # one user's adds in order; taken before `_lock`
        self._pending = PendingTurns(store)
        self._summary_vectors = SummaryVectors(embedder, pool=config.pool_summary_vectors)
        self._prep = BufferPrep(config, self._summary_vectors)  # per-turn work, cached
        self._guard = guard or WriteGuard(store)
        self._consolidation = WriteConsolidation(
            store, clock, roles=roles, embedder=embedder, on=config.consolidate_on_write
        )
        self._guard.on_stale(self.forget)  # another worker wrote the user: reload its turns
        self._flusher = Flusher(
            embedder,
            roles,
            config,
            pending=self._pending,
            prep=self._prep,
            summary_vectors=self._summary_vectors,
            consolidation=self._consolidation,
            guard=self._guard,
        )

    # --- public ------------------------------------------------------------------------
    def add(self, request: AddRequest) -> AddResult:
        """Persist the call's turns as pending, then flush whatever buffers are full. The
        request's metadata goes on every turn; its request id names the call: the same
        request sent again is recognised by it and stores nothing twice (`repeats_request`)."""
        with one_blas_thread():  # see hymem.write.blas
            return self._add(request)

    def _add(self, request: AddRequest) -> AddResult:
        user_id, session_id = request.user_id, request.session_id
        accepted, meta, request_id = request.messages, request.metadata, request.request_id
        # The stripe keeps this user's adds in order; `_lock` is released around the append,
        # so other users' adds in flight share its commit (`TurnAppends`).
        # The ids a request id makes (for messages without their own), looked up below.
        made = [
            request_turn_id(user_id, request_id, i)
            for i, m in enumerate(accepted)
            if request_id is not None and m.id is None
        ]
        with self._guard.writing(user_id), self._stripe(user_id), self._reload_on_error(user_id):
            # A request's ids are looked up outside `_lock` (other users' adds go on); the
            # stripe and the right to write keep this user's turns as read until the append.
            earlier = self._store.get_turns(user_id, ids=made) if made else []
            with self._lock:
                retried = self._retried(request, earlier)
                if retried is not None:
                    log.info("ingest.retry_recognised", user_id=user_id, turns=len(retried))
                    flushed = self._flusher.flush(user_id, force=False)
                    return add_result(flushed, turn_ids=retried)
                seq = self._pending.next_seq(user_id)
                records = pending_records(
                    user_id, session_id, seq, accepted, self._clock(), meta, request_id
                )
            # Fresh: content ids embed a new sequence number, and a request's ids were just
            # found unused; only the caller's own ids need the store's look-up.
            generated = {r.id for r, m in zip(records, accepted, strict=True) if not m.id}
            inserted = self._store.append_turns(records, fresh_ids=generated)
            with self._lock:
                self._pending.appended(user_id, records, inserted)
                log.info(
                    "ingest.accepted",
                    user_id=user_id,
                    session_id=session_id,
                    turns=len(records),
                    new=len(inserted),
                )
                flushed = self._flusher.flush(user_id, force=False)
        after = self._consolidation.after_write(user_id, self._guard)
        return add_result(
            flushed, after, turn_ids=[r.id for r in records], new_turn_ids=list(inserted)
        )

    def _retried(self, request: AddRequest, earlier: list[TurnRecord]) -> list[str] | None:
        """The turn ids of the earlier add() this call repeats, if it is a retry: of the same
        request id (`earlier`: the stored turns with the request's ids) when it has one; else,
        only where `retry_window_s` turns it on, of the user's previous call by equal text."""
        user_id, session_id, accepted = request.user_id, request.session_id, request.messages
        meta, request_id = request.metadata, request.request_id
        if request_id is not None:
            ids = call_turn_ids(user_id, request_id, accepted)
            again = repeats_request(request_id, ids, earlier, session_id, accepted, meta)
            return ids if again else None
        last = repeats_last_call(
            self._pending.last_call(user_id),
            session_id,
            accepted,
            self._clock(),
            self._config.retry_window_s,
            metadata=meta,
        )
        return None if last is None else [t.id for t in last]

    def flush(self, *, user_id: str) -> AddResult:
        """Summarise and store every pending turn of `user_id` now (in buffer-sized calls)."""
        with one_blas_thread():
            with (
                self._guard.writing(user_id),
                self._stripe(user_id),
                self._lock,
                self._reload_on_error(user_id),
            ):
                flushed: Flushed = self._flusher.flush(user_id, force=True)
            after = self._consolidation.after_write(user_id, self._guard)
        return add_result(flushed, after)

    def pending(self, *, user_id: str) -> list[TurnRecord]:
        """Turns accepted but not yet stored, in acceptance order."""
        return self._store.get_turns(user_id, status=TurnStatus.PENDING)

    @contextmanager
    def exclusive(self, user_id: str) -> Iterator[None]:
        """Hold every add and flush off while the block rewrites the user's turns underneath
        (erasure, import), then drop what this process remembers of them: pending turns, the
        last call, cached vectors and token counts. Else a flush after an erase would commit
        the erased turns again from memory."""
        with self._stripe(user_id), self._lock:
            try:
                yield
            finally:
                self._pending.drop_user(user_id)
                self._prep.drop_user(user_id)

    def forget(self, user_id: str) -> None:
        """Another writer wrote this user (an object store's lease changed hands): what this
        process cached of its pending turns is reloaded from the store on next use."""
        with self._lock:
            self._pending.forget(user_id)

    def close(self) -> None:
        """After every add and flush in flight (each holds its user's stripe throughout)."""
        with self._stripe.every(), self._lock:
            self._prep.close()
        self._pending.clear()

    @contextmanager
    def _reload_on_error(self, user_id: str) -> Iterator[None]:
        """Any failure mid-write leaves the store as the only truth: the view is reloaded."""
        try:
            yield
        except BaseException:
            self._pending.forget(user_id)
            raise
