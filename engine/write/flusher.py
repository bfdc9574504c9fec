"""A flush of one user's pending turns: plan the buffers (`hymem.write.buffer`), summarise
each with one summariser call, commit them in groups, and return what it did (`Flushed`).

A model summariser that fails on a buffer (unavailable, rejected, or no valid reply) never
blocks the user's later turns: with `summarise_fallback` (the default) the extractive
summariser summarises that buffer, and the rest of the flush's buffers, without asking the
model again, so each buffer costs at most one model call (its retries inside); its summaries
are marked origin "fallback" and its segments listed in `Flushed.summarise_fallbacks`. With it
off, the turns stay pending for the next call to retry. A full disk at the commit is reported
the same way: the turns are durable already, so they stay pending and the error is returned.
"""

from __future__ import annotations

from hymem.core import tracing
from hymem.core.config import MemoryConfig
from hymem.core.errors import LLMError, StorageFullError
from hymem.core.logging import get_logger
from hymem.core.types import RoleUsage, SegmentRecord, TurnRecord, Usage
from hymem.embed.embedders import Embedder
from hymem.facts import fact_key
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.roles import RoleResult, Roles, RolesProvider, SegmentInput, SummariseOutput
from hymem.write.buffer import BufferedSegment, may_flush, plan_due, plan_flush
from hymem.write.consolidate import WriteConsolidation
from hymem.write.grounding import ground
from hymem.write.guard import WriteGuard
from hymem.write.parts import Committed, Flushed, Prepared, Summarised, commit_attributes
from hymem.write.pending import PendingTurns
from hymem.write.pooling import pooled_vector
from hymem.write.prepare import BufferPrep
from hymem.write.records import build_segment, build_summaries, summary_sources
from hymem.write.segmentation import Span
from hymem.write.summary_vectors import SummaryVectors

log = get_logger("hymem.write.ingestor")

# Buffers summarised in one add/flush are committed together (one journaled LanceDB + Tantivy
# write instead of one per buffer: ~120 ms each, which was a third of a LongMemEval history's
# ingest). At most this many: a crash before the commit re-summarises at most this many buffers.
COMMIT_EVERY_BUFFERS = 16


class SummariseFailed(Exception):
    """The model summariser failed on a buffer and `summarise_fallback` is off."""


class Flusher:
    """Flushes pending turns for an `Ingestor`, which calls it under the user's stripe, its
    lock and the right to write, with the parts it shares (the pending view, the per-turn
    preparation, the summary vectors, the write-time consolidation)."""

    def __init__(
        self,
        embedder: Embedder,
        roles: RolesProvider,
        config: MemoryConfig,
        *,
        pending: PendingTurns,
        prep: BufferPrep,
        summary_vectors: SummaryVectors,
        consolidation: WriteConsolidation,
        guard: WriteGuard,
    ) -> None:
        self._embedder, self._roles, self._config = embedder, roles, config
        self._pending, self._prep, self._summary_vectors = pending, prep, summary_vectors
        self._consolidation, self._guard = consolidation, guard
        self._fallback: Roles | None = None  # the extractive summariser, built on first need

    def flush(self, user_id: str, *, force: bool) -> Flushed:
        """Plan the user's pending turns into buffers (all of them with `force`, else only
        the full ones), summarise and commit them; returns what was done."""
        pending = self._pending.turns(user_id)
        backend = self._roles().label  # cheap: backends load lazily
        if not pending:
            return Flushed(pending=0, backend=backend)
        unchanged = Flushed(pending=len(pending), backend=backend)
        texts = self._prep.texts(pending)
        tokens = self._prep.token_counts(pending, texts)
        if not force and not may_flush(pending, tokens, self._config.buffer_tokens):
            return unchanged
        every = self._config.plan_every_turns
        if not force and not plan_due(pending, self._pending.unplanned(user_id), every):
            return unchanged
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
            return unchanged
        usage, fallbacks, commits = Usage(), list[str](), list[Committed]()
        error: str | None = None  # the model summariser's, when its fallback is off
        done: list[Summarised] = []
        model_failed = False
        for batch in batches:
            # once the model failed in this flush, the rest of its buffers skip it: a model
            # that timed out once would only time out again, one deadline per buffer
            part: Summarised | None = None
            try:
                part = self._summarise_batch(
                    user_id, pending, prepared, [spans[k] for k in batch], model=not model_failed
                )
            except SummariseFailed as exc:
                error = str(exc)
            if part is not None:
                usage.add("summarise", part.usage)
                if part.fallback:
                    model_failed = True
                    fallbacks.extend(seg.id for seg in part.segments)
                fallbacks.extend(part.regrounded)
                done.append(part)
            if part is None or len(done) == COMMIT_EVERY_BUFFERS:
                commits.append(self._commit_or_report(user_id, done))
                done = []
                if commits[-1].error is not None:
                    part = None
            if part is None:
                break
        commits.append(self._commit_or_report(user_id, done))
        stored = sum(c.turns for c in commits)
        errors = [c.error for c in commits if c.error is not None]
        return Flushed(
            pending=len(pending) - stored,
            backend=backend,
            commits=commits,
            usage=usage,
            summarise_fallbacks=fallbacks,
            error=errors[-1] if errors else error,
        )

    def _commit_or_report(self, user_id: str, parts: list[Summarised]) -> Committed:
        """`_commit`, except that a full disk is reported like a model outage: the turns stay
        pending (they are durable already, so the call must not raise as if nothing had been
        stored), the result's `error` says why, and the next add/flush retries."""
        try:
            with tracing.span("hymem.commit", commit_attributes(parts)):
                return self._commit(user_id, parts)
        except StorageFullError as exc:
            self._pending.forget(user_id)
            log.warning("ingest.commit_failed", user_id=user_id, error=str(exc))
            return Committed(error=str(exc))

    # --- one buffer, one summariser call --------------------------------------------------
    def _summarise_batch(
        self,
        user_id: str,
        pending: list[TurnRecord],
        prepared: Prepared,
        spans: list[Span],
        *,
        model: bool = True,
    ) -> Summarised:
        """One buffer, one summariser call. On a model failure the extractive summariser
        stands in (`summarise_fallback`), or, with it off, SummariseFailed: its turns stay
        pending; the error is in the log. `model=False`: the extractive one at once."""
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
        res = self._summarise(user_id, inputs, len(core_ids), model=model)
        regrounded: list[str] = []
        if not res.fallback and self._model_writes():  # extractive facts are quotes
            res, regrounded = self._regrounded(user_id, inputs, res)
        summaries = build_summaries(user_id, segments, res.output.segments)
        if res.fallback:
            log.warning("ingest.summarise_fallback", user_id=user_id, segments=len(segments))
        for summary in summaries:  # so they can be found and summarised again
            if res.fallback or summary.segment_id in regrounded:
                summary.origin = "fallback"
        sources = summary_sources(
            summaries, res.output.segments, {seg.id: seg_turns for seg, seg_turns in members}
        )
        return Summarised(
            segments, summaries, core_ids, sources, res.usage, res.fallback, regrounded
        )

    def _regrounded(
        self, user_id: str, inputs: list[SegmentInput], res: RoleResult[SummariseOutput]
    ) -> tuple[RoleResult[SummariseOutput], list[str]]:
        """The model's reply without facts from outside their segment (`hymem.write.grounding`);
        a segment left with none is summarised by the extractive summariser instead, counted
        as one fallback of the call. Returns the reply and those segments' ids."""
        checked = ground(inputs, res.output)
        if not checked.ungrounded:
            return res.model_copy(update={"output": checked.output}), []
        redo = set(checked.ungrounded)
        log.warning(
            "ingest.summaries_ungrounded",
            user_id=user_id,
            segments=len(redo),
            facts_dropped=checked.dropped,
        )
        stand_in = self._extractive().summarise([i for i in inputs if i.segment_id in redo])
        by_id = {s.segment_id: s for s in stand_in.output.segments}
        output = SummariseOutput(
            segments=[by_id.get(s.segment_id, s) for s in checked.output.segments]
        )
        usage = res.usage + RoleUsage(fallbacks=1)
        return res.model_copy(update={"output": output, "usage": usage}), checked.ungrounded

    def _summarise(
        self, user_id: str, inputs: list[SegmentInput], turns: int, *, model: bool
    ) -> RoleResult[SummariseOutput]:
        """The buffer's summaries: the model's, else (a model failure, or `model=False`) the
        extractive summariser's flagged as a fallback; SummariseFailed when that is off."""
        reason = "the model summariser failed earlier in this call"
        if self._config.summariser == "extractive" and self._roles().label != "extractive":
            with tracing.span("hymem.summarise", {"hymem.segments": len(inputs)}):
                res = self._extractive().summarise(inputs)  # by choice: no fallback
            return res.model_copy(update={"usage": RoleUsage()})  # and no model call
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
                    raise SummariseFailed(str(exc)) from exc
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

    def _model_writes(self) -> bool:
        """Whether the model writes the summaries (else the extractive summariser does)."""
        return self._config.summariser == "model" and self._roles().label != "extractive"

    def _extractive(self) -> Roles:
        """The extractive roles that stand in for a failing model summariser (cheap; built
        once, and only when the model first fails)."""
        if self._fallback is None:
            self._fallback = ExtractiveRoles(self._embedder)
        return self._fallback

    def _commit(self, user_id: str, parts: list[Summarised]) -> Committed:
        """Embed the summaries of `parts` in one call and commit them in one journaled write;
        returns what it stored."""
        if not parts:
            return Committed()
        segments = [s for p in parts for s in p.segments]
        summaries = [s for p in parts for s in p.summaries]
        core_ids = [t for p in parts for t in p.core_ids]
        for s in summaries:  # what write-time supersession and the profile match on
            s.fact_key = fact_key(s.text)
        pooled = self._summary_vectors.assign(
            summaries, {k: v for p in parts for k, v in p.sources.items()}
        )
        folded = self._consolidation.commit(user_id, segments, summaries, core_ids, self._guard)
        self._pending.stored(user_id, core_ids)
        self._prep.drop([(user_id, tid) for tid in core_ids])
        log.info(
            "ingest.committed",
            user_id=user_id,
            buffers=len(parts),
            segments=len(segments),
            summaries=len(summaries),
            pooled_vectors=pooled,
            turns=len(core_ids),
        )
        return Committed(
            turns=len(core_ids),
            segment_ids=[s.id for s in segments],
            summary_ids=[s.id for s in summaries],
            consolidated=folded,
        )


__all__ = ["COMMIT_EVERY_BUFFERS", "Flusher", "SummariseFailed"]
