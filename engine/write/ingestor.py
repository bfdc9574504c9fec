"""The write path: turns -> durable pending turns -> (compression) -> topic segments ->
short-term buffer -> one summariser call per buffer -> Level-1 summaries linked to Level-2
segments, committed through `Commits.commit_segments`.

Durability: `add` validates the whole call, then writes every turn as `pending` in one
`append_turns` batch before any model runs. The short-term buffer is the set of pending turns in
the store; the writer keeps a view of it (`PendingTurns`) that is reloaded whenever a write
fails, so a crash can lose nothing. A model summariser that fails on a buffer (unavailable,
rejected, or no valid reply) never blocks the user's later turns: with `summarise_fallback` (the
default) the extractive summariser summarises that buffer, and the rest of the call's buffers,
without asking the model again, so each buffer costs at most one model call (its retries
inside); its summaries are marked origin "fallback" and its segments listed in
`AddResult.summarise_fallbacks`. With it off, the turns stay pending for the next call to retry.

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

from hymem.core import tracing
from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMError, StorageFullError
from hymem.core.logging import get_logger
from hymem.core.metadata import Metadata
from hymem.core.time import Clock, parse_time, utcnow
from hymem.core.types import AddResult, RoleUsage, SegmentRecord, TurnRecord, TurnStatus
from hymem.core.validation import check_session_id
from hymem.embed.embedders import Embedder
from hymem.facts import fact_key
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.roles import RoleResult, Roles, RolesProvider, SegmentInput, SummariseOutput
from hymem.write.blas import one_blas_thread
from hymem.write.buffer import BufferedSegment, may_flush, plan_due, plan_flush
from hymem.write.consolidate import WriteConsolidation
from hymem.write.guard import WriteGuard
from hymem.write.messages import Messages, NormalisedMessage, normalise_messages
from hymem.write.parts import Prepared, Summarised, commit_attributes
from hymem.write.pending import PendingTurns, repeats_last_call, repeats_request
from hymem.write.pooling import pooled_vector
from hymem.write.ports import WriteStore
from hymem.write.prepare import BufferPrep
from hymem.write.records import (
    build_segment,
    build_summaries,
    call_turn_ids,
    pending_records,
    request_turn_id,
    summary_sources,
)
from hymem.write.segmentation import Span
from hymem.write.stripes import UserStripes
from hymem.write.summary_vectors import SummaryVectors

log = get_logger("hymem.write.ingestor")

# Buffers summarised in one add/flush are committed together (one journaled LanceDB + Tantivy
# write instead of one per buffer: ~120 ms each, which was a third of a LongMemEval history's
# ingest). At most this many: a crash before the commit re-summarises at most this many buffers.
COMMIT_EVERY_BUFFERS = 16


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
        self._fallback: Roles | None = None  # the extractive summariser, built on first need

    # --- public ------------------------------------------------------------------------
    def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: object = None,
        metadata: Metadata | None = None,
        request_id: str | None = None,
    ) -> AddResult:
        """Persist the call's turns as pending, then flush whatever buffers are full.
        `metadata`, checked by the caller (`hymem.core.metadata.with_scopes`), goes on every
        turn. `request_id` (checked by the caller) names the call: the same request sent again
        is recognised by it and stores nothing twice (`repeats_request`)."""
        with one_blas_thread():  # see hymem.write.blas
            return self._add(messages, user_id, session_id, timestamp, metadata, request_id)

    def _add(
        self,
        messages: Messages,
        user_id: str,
        session_id: str,
        timestamp: object,
        metadata: Metadata | None,
        request_id: str | None,
    ) -> AddResult:
        check_session_id(session_id)
        call_time = parse_time(timestamp, "timestamp") if timestamp is not None else self._clock()
        accepted = normalise_messages(messages, default_time=call_time)
        meta = dict(sorted((metadata or {}).items()))  # the stored, canonical key order
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
                retried = self._retried(user_id, session_id, accepted, meta, request_id, earlier)
                if retried is not None:
                    log.info("ingest.retry_recognised", user_id=user_id, turns=len(retried))
                    result = AddResult(turn_ids=retried, new_turn_ids=[])
                    self._process(user_id, force=False, result=result)
                    return result
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
                result = AddResult(turn_ids=[r.id for r in records], new_turn_ids=list(inserted))
                self._process(user_id, force=False, result=result)
        self._consolidation.after_write(user_id, result, self._guard)
        return result

    def _retried(
        self,
        user_id: str,
        session_id: str,
        accepted: list[NormalisedMessage],
        meta: Metadata,
        request_id: str | None,
        earlier: list[TurnRecord],
    ) -> list[str] | None:
        """The turn ids of the earlier add() this call repeats, if it is a retry: of the same
        request id (`earlier`: the stored turns with the request's ids) when it has one; else,
        only where `retry_window_s` turns it on, of the user's previous call by equal text."""
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
                result = AddResult()
                self._process(user_id, force=True, result=result)
            self._consolidation.after_write(user_id, result, self._guard)
        return result

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

    # --- planning ------------------------------------------------------------------------
    def _process(self, user_id: str, *, force: bool, result: AddResult) -> None:
        pending = self._pending.turns(user_id)
        result.pending = len(pending)
        result.backend = self._roles().label  # cheap: backends load lazily
        if not pending:
            return
        texts = self._prep.texts(pending)
        tokens = self._prep.token_counts(pending, texts)
        if not force and not may_flush(pending, tokens, self._config.buffer_tokens):
            return
        every = self._config.plan_every_turns
        if not force and not plan_due(pending, self._pending.unplanned(user_id), every):
            return
        with tracing.span("hymem.embed", {"hymem.turns": len(pending)}):
            prepared = self._prep.prepare(pending, texts, tokens)
        with tracing.span("hymem.segment", {"hymem.turns": len(pending)}) as current:
            spans = self._prep.segment(pending, prepared)
            current.set_attribute("hymem.segments", len(spans))
        buffered = [
            BufferedSegment(
                tokens=sum(prepared.tokens[i] for i in s.core),
                session_id=pending[s.start].session_id,
            )
            for s in spans
        ]
        batches = plan_flush(buffered, buffer_tokens=self._config.buffer_tokens, force=force)
        self._pending.planned(user_id, stored_any=bool(batches))  # see `plan_due`
        if not batches:
            return
        stored = 0
        done: list[Summarised] = []
        for batch in batches:
            # once the model failed in this call, the rest of its buffers skip it: a model that
            # timed out once would only time out again, one deadline per buffer
            part = self._summarise_batch(
                user_id,
                pending,
                prepared,
                [spans[k] for k in batch],
                result,
                model=not result.summarise_fallbacks,
            )
            if part is not None:
                done.append(part)
            if part is None or len(done) == COMMIT_EVERY_BUFFERS:
                n = self._commit_or_report(user_id, done, result)
                stored, done = stored + max(n, 0), []
                if n < 0:
                    part = None
            if part is None:
                break
        stored += max(self._commit_or_report(user_id, done, result), 0)
        result.pending = len(pending) - stored

    def _commit_or_report(self, user_id: str, parts: list[Summarised], result: AddResult) -> int:
        """`_commit`, except that a full disk is reported like a model outage: the turns stay
        pending (they are durable already, so the call must not raise as if nothing had been
        stored), `AddResult.error` says why, and the next add/flush retries. -1 on failure."""
        try:
            with tracing.span("hymem.commit", commit_attributes(parts)):
                return self._commit(user_id, parts, result)
        except StorageFullError as exc:
            result.error = str(exc)
            self._pending.forget(user_id)
            log.warning("ingest.commit_failed", user_id=user_id, error=str(exc))
            return -1

    # --- one buffer, one summariser call --------------------------------------------------
    def _summarise_batch(
        self,
        user_id: str,
        pending: list[TurnRecord],
        prepared: Prepared,
        spans: list[Span],
        result: AddResult,
        *,
        model: bool = True,
    ) -> Summarised | None:
        """One buffer, one summariser call. On a model failure the extractive summariser
        stands in (`summarise_fallback`), or, with it off, None: its turns stay pending; the
        error is on the result and in the log. `model=False`: the extractive one at once."""
        compressed = self._prep.compressor() is not None
        segments: list[SegmentRecord] = []
        inputs: list[SegmentInput] = []
        core_ids: list[str] = []
        members: list[tuple[SegmentRecord, list[TurnRecord]]] = []
        for span in spans:
            turns = [pending[i] for i in span.all]
            lines = [prepared.lines[i] for i in span.all]
            seg = build_segment(user_id, turns, summariser_lines=lines if compressed else None)
            seg.vector = pooled_vector(prepared.vectors[list(span.all)])
            segments.append(seg)
            members.append((seg, turns))
            inputs.append(
                SegmentInput(segment_id=seg.id, lines=lines, session_time=turns[0].timestamp)
            )
            core_ids.extend(pending[i].id for i in span.core)
        res = self._summarise(user_id, inputs, len(core_ids), result, model=model)
        if res is None:
            return None
        result.usage.add("summarise", res.usage)
        summaries = build_summaries(user_id, segments, res.output.segments)
        if res.fallback:
            log.warning("ingest.summarise_fallback", user_id=user_id, segments=len(segments))
            result.summarise_fallbacks.extend(seg.id for seg in segments)
            for summary in summaries:  # so they can be found and summarised again
                summary.origin = "fallback"
        sources = summary_sources(
            summaries, res.output.segments, {seg.id: seg_turns for seg, seg_turns in members}
        )
        return Summarised(segments, summaries, core_ids, sources)

    def _summarise(
        self,
        user_id: str,
        inputs: list[SegmentInput],
        turns: int,
        result: AddResult,
        *,
        model: bool,
    ) -> RoleResult[SummariseOutput] | None:
        """The buffer's summaries: the model's, else (a model failure, or `model=False`) the
        extractive summariser's flagged as a fallback, else None when the fallback is off."""
        reason = "the model summariser failed earlier in this call"
        if model:
            try:
                with tracing.span("hymem.summarise", {"hymem.segments": len(inputs)}):
                    return self._roles().summarise(inputs)
            except LLMError as exc:
                reason = f"{type(exc).__name__}: {exc}"
                log.warning(
                    "ingest.summarise_failed",
                    user_id=user_id,
                    segments=len(inputs),
                    turns=turns,
                    error=str(exc),
                )
                if not self._config.summarise_fallback:
                    result.error = str(exc)
                    return None
        attributes = {"hymem.segments": len(inputs), "hymem.fallback": "extractive"}
        with tracing.span("hymem.summarise", attributes) as current:
            current.set_attribute("hymem.fallback.reason", reason)
            res = self._extractive().summarise(inputs)
        return res.model_copy(
            update={
                "fallback": True,
                "fallback_reason": f"extractive summaries: {reason}",
                "usage": RoleUsage(fallbacks=1),  # no model call: none counted
            }
        )

    def _extractive(self) -> Roles:
        """The extractive roles that stand in for a failing model summariser (cheap; built
        once, and only when the model first fails)."""
        if self._fallback is None:
            self._fallback = ExtractiveRoles(self._embedder)
        return self._fallback

    def _commit(self, user_id: str, parts: list[Summarised], result: AddResult) -> int:
        """Embed the summaries of `parts` in one call and commit them in one journaled write;
        returns the number of turns stored."""
        if not parts:
            return 0
        segments = [s for p in parts for s in p.segments]
        summaries = [s for p in parts for s in p.summaries]
        core_ids = [t for p in parts for t in p.core_ids]
        for s in summaries:  # what write-time supersession and the profile match on
            s.fact_key = fact_key(s.text)
        pooled = self._summary_vectors.assign(
            summaries, {k: v for p in parts for k, v in p.sources.items()}
        )
        self._consolidation.commit(user_id, segments, summaries, core_ids, result, self._guard)
        self._pending.stored(user_id, core_ids)
        self._prep.drop([(user_id, tid) for tid in core_ids])
        result.segments_written.extend(s.id for s in segments)
        result.summaries_written.extend(s.id for s in summaries)
        log.info(
            "ingest.committed",
            user_id=user_id,
            buffers=len(parts),
            segments=len(segments),
            summaries=len(summaries),
            pooled_vectors=pooled,
            turns=len(core_ids),
        )
        return len(core_ids)
