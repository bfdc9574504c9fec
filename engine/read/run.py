"""One ask's state: `Run` searches and reads for the scheduler's steps (`hymem.read.steps`
executes them) and keeps what the ask retrieved, spent and timed so far (the Answer and the
trace are built from it). Isolation lives here: every search and store read is filtered by
`user_id`, and every segment read is checked against `user_id` again before its text reaches a
prompt. A model failure the ask recovers from is recorded here (`model_failed`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from hymem.core.errors import LLMError, LLMUnavailable
from hymem.core.logging import get_logger
from hymem.core.tracing import set_attributes
from hymem.core.types import Hit, Level, RoleUsage, Usage
from hymem.embed.embedders import Embedder
from hymem.llm.extractive.backend import ExtractiveRoles
from hymem.llm.roles import RoleResult, Roles, RolesProvider
from hymem.llm.tokens import count_tokens
from hymem.read.candidates import LIGHT_EXTRA, distinct_sources, fuse_candidates, summary_depth
from hymem.read.params import AskParams
from hymem.read.ports import SegmentStore
from hymem.read.scheduler import Cost, ScheduleResult
from hymem.read.segments import read_segments
from hymem.search.light_context import light_context
from hymem.search.searcher import QueryVectors, VectorSearcher

log = get_logger("hymem.read.run")


@dataclass
class RoundIds:
    """What one round retrieved and read, by id (hits kept for the answer's evidence)."""

    summary_ids: list[str] = field(default_factory=list)  # light top-k
    candidate_ids: list[str] = field(default_factory=list)  # deep top-N
    selected_ids: list[str] = field(default_factory=list)  # chosen by event selection
    segment_ids: list[str] = field(default_factory=list)  # Level-2 read by the deep answer
    turn_ids: list[str] = field(default_factory=list)  # turns covered by those segments
    light_hits: list[Hit] = field(default_factory=list)
    candidates: list[Hit] = field(default_factory=list)
    selected: list[Hit] = field(default_factory=list)
    segments: list[Hit] = field(default_factory=list)
    answered_light: bool = False  # the deep answer failed and the light answer stood in

    def ids(self) -> dict[str, list[str]]:
        return {
            "summary_ids": self.summary_ids,
            "candidate_ids": self.candidate_ids,
            "selected_ids": self.selected_ids,
            "segment_ids": self.segment_ids,
            "turn_ids": self.turn_ids,
            # the light path's summaries stand for these turns (their source_turn_ids)
            "summary_turn_ids": list(dict.fromkeys(t for h in self.light_hits for t in h.turn_ids)),
        }


class Run:
    """One ask (or one context() call): retrieval state, usage, latency and fallbacks."""

    def __init__(
        self,
        params: AskParams,
        *,
        store: SegmentStore,
        embedder: Embedder,
        searcher: VectorSearcher,
        roles: RolesProvider,
        concurrency: int,
        fallback: bool = True,
    ) -> None:
        """`fallback=False`: a model failure raises instead of falling back (`ask_fallback`)."""
        self._store, self._embedder, self._searcher = store, embedder, searcher
        self._roles = roles
        self.concurrency = concurrency  # selection batches judged at once
        self._fallback_on = fallback
        self.question, self.user_id = params.question, params.user_id
        # the moment the question is asked: nothing stored after it is retrieved (the scope's
        # upper bound), and the answering roles resolve relative expressions against it
        self.as_of = params.as_of
        self._scope = params.scope  # every search of the ask: this user, matching metadata
        self.filters = params.scope.filters
        self._summary_depth = summary_depth(params.plan)
        self._light_tokens = params.plan.light_tokens
        self.k = params.plan.k  # the light top-k a fallback light answer reads
        self.usage = Usage()
        self.latency: dict[str, float] = {}
        self.versions: dict[str, str] = {}
        self.fallbacks: list[str] = []
        # what answered in place of a failed model role: "light" (the light answer stood in
        # for the deep one) or "extractive" (no model answer at all); None: the model did
        self.fallback: Literal["light", "extractive"] | None = None
        self._extractive: Roles | None = None
        # the model was unavailable (down, timed out) in this ask: the later roles of the ask
        # go straight to their fallback instead of each waiting out its own deadline
        self._model_down: LLMError | None = None
        self._failures = threading.Lock()
        self.light_answers: dict[int, str] = {}  # per round: the light answer, when non-empty
        self.notes: list[str] = []  # what the roles corrected, e.g. unknown ids dropped
        self.rounds: dict[int, RoundIds] = {}
        # per round: further segments (a merged repeat's) the deep read's tokens did not fit
        self.segments_left_out: dict[int, int] = {}
        self._vectors = QueryVectors(embedder)
        # per (query, level): how many hits were asked for, and the hits (best first)
        self._found: dict[tuple[str, Level], tuple[int, list[Hit]]] = {}

    @property
    def roles(self) -> Roles:
        """Resolved on first use, so a light context() call never builds a model client."""
        return self._roles()

    @property
    def model(self) -> Roles:
        """The roles a model step calls: raises the model's earlier LLMUnavailable at once
        when it was unavailable earlier in this ask (the step's fallback then stands in)."""
        if self._model_down is not None:
            raise self._model_down
        return self._roles()

    # --- bookkeeping ---------------------------------------------------------------------
    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            ms = (time.perf_counter() - start) * 1000.0
            self.latency[stage] = self.latency.get(stage, 0.0) + ms

    def account(self, result: RoleResult[Any]) -> Cost:
        """Fold one role result into the run; returns its cost for the budget."""
        role = str(result.role)
        self.usage.add(role, result.usage)
        if result.prompt_version:
            self.versions[role] = result.prompt_version
        if result.fallback:
            self.fallbacks.append(f"{role}: {result.fallback_reason or 'fallback'}")
        self.notes.extend(f"{role}: {note}" for note in getattr(result, "notes", ()))
        return Cost(calls=result.usage.calls, tokens=result.usage.total_tokens)

    def model_failed(self, role: str, exc: LLMError, instead: str) -> None:
        """Record a model failure the ask recovers from: in `fallbacks` (the Answer's and the
        trace's), the log and the current span. Raises `exc` when fallbacks are off."""
        if not self._fallback_on:
            raise exc
        reason = f"{role}: {type(exc).__name__}: {exc} -> {instead}"
        with self._failures:  # selection batches fail concurrently
            if isinstance(exc, LLMUnavailable):
                self._model_down = exc
            self.fallbacks.append(reason)
            self.usage.add(role, RoleUsage(fallbacks=1))  # the fallbacks metric counts these
        log.warning(
            "ask.model_failed", user_id=self.user_id, role=role, error=str(exc), instead=instead
        )
        set_attributes({"hymem.fallback": instead, "error.type": type(exc).__name__})

    def extractive(self) -> Roles:
        """The roles that stand in for a failed model: no model, built on first need."""
        if self._extractive is None:
            self._extractive = ExtractiveRoles(self._embedder)
        return self._extractive

    def round(self, index: int) -> RoundIds:
        return self.rounds.setdefault(index, RoundIds())

    # --- retrieval -----------------------------------------------------------------------
    def search(self, query: str, k: int, level: Level = Level.SUMMARY) -> list[Hit]:
        """The top k hybrid hits. The query is embedded once and reused within the ask, and
        searched once per level: the first summary search of a query fetches as many as its
        round may read (`summary_depth`), so the light top-k and an escalation's deep top-N
        are cut from one search instead of searching the same vector twice."""
        key = (query, level)
        searched = self._found.get(key)
        if searched is None or searched[0] < k:
            depth = max(k, self._summary_depth) if level is Level.SUMMARY else k
            hits = self._searcher.find(query, self._scope.sized(depth, level), self._vectors[query])
            searched = self._found[key] = (depth, [h for h in hits if h.user_id == self.user_id])
        return searched[1][:k]

    def light_hits(self, index: int, query: str, k: int) -> list[Hit]:
        """The light context: summaries that each add a source turn, by the fused light rank
        until the plan's token budget (`hymem.search.light_context`), or the top k without."""
        with self.timed("retrieve_light"):
            if self._light_tokens:
                hits = light_context(
                    self._searcher,
                    self._vectors,
                    query,
                    self._scope,
                    self._light_tokens,
                    count_tokens,
                )
            else:
                hits = distinct_sources(self.search(query, k + LIGHT_EXTRA), k)
        self.round(index).summary_ids = [h.id for h in hits]
        self.round(index).light_hits = hits
        return hits

    def candidates(self, index: int, query: str, n: int) -> list[Hit]:
        """Summaries and segments fused (`hymem.read.candidates`): no segment is unreachable."""
        with self.timed("retrieve_deep"):
            hits = fuse_candidates(
                self.search(query, n), self.search(query, n, Level.SEGMENT), n, query
            )
        self.round(index).candidate_ids = [h.id for h in hits]
        self.round(index).candidates = hits
        return hits

    def segments(self, index: int, tokens_left: int | None = None) -> list[Hit]:
        """Level-2 segments linked from the chosen summaries (`read_segments`), recorded on
        the round with how many further segments `tokens_left` did not fit."""
        hits, left_out = read_segments(
            self._store, self.user_id, self.round(index).selected, tokens_left
        )
        self.segments_left_out[index] = left_out
        self.round(index).segment_ids = [h.id for h in hits]
        self.round(index).turn_ids = [t for h in hits for t in h.turn_ids]
        self.round(index).segments = hits
        return hits

    # --- step execution ------------------------------------------------------------------
    def evidence(self, result: ScheduleResult) -> list[Hit]:
        """What the final round's answer was built from."""
        final = self.round(result.rounds[-1].index)
        if result.path == "light" or final.answered_light:
            return list(final.light_hits)
        # a chosen segment candidate was shown as a snippet: its full read stands for it
        chosen = [h for h in final.selected if h.level != Level.SEGMENT]
        return [*chosen, *final.segments]
