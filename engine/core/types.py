"""The records hymem stores and the results it returns.

Every stored and compared instant is a naive UTC `datetime` (`hymem.core.time`): aware datetimes are
converted to UTC at the API edge, and naive ones are taken as UTC already (so a zone-less date
such as LoCoMo's is read as UTC, never as the machine's local time). In JSON (REST, MCP, exports,
`model_dump_json`) each is written with its offset (`...Z`): `UtcDatetime`. Storage layers convert
these models to and from Arrow rows; nothing else should know the column layout.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from hymem.core.time import UtcDatetime
from pydantic import BaseModel, ConfigDict, Field, model_validator

# A metadata value (`hymem.core.metadata` checks them): typed, so "1", 1 and True differ.
MetaValue = str | bool | int | float


class Level(StrEnum):
    """Granularity: Level-1 key-information summaries or Level-2 raw dialogue segments."""

    SUMMARY = "summary"
    SEGMENT = "segment"


class SummaryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DELETED = "deleted"


class Attribution(StrEnum):
    """How a summary's `source_turn_ids` were found: the extractive summariser took the fact
    from those turns' own sentences (`source`), a model named them and they were checked against
    the segment (`model`), or no usable attribution came back and the summary stands for its
    whole segment (`segment`, the flagged fallback)."""

    SOURCE = "source"
    MODEL = "model"
    SEGMENT = "segment"


class TurnStatus(StrEnum):
    PENDING = "pending"
    STORED = "stored"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TurnRecord(_Record):
    """Write-ahead record of one accepted message; durable before any model runs."""

    id: str
    user_id: str
    session_id: str
    seq: int  # order of acceptance within the user, strictly increasing
    speaker: str
    text: str
    timestamp: UtcDatetime | None = None
    status: TurnStatus = TurnStatus.PENDING
    segment_id: str | None = None  # the first segment that covers it, once stored
    created_at: UtcDatetime
    metadata: dict[str, MetaValue] = Field(default_factory=dict)  # given on add()


class SegmentRecord(_Record):
    """Level-2: one event unit of raw dialogue. Never lossy."""

    id: str
    user_id: str
    session_ids: list[str]
    turn_ids: list[str]
    text: str  # "[time] speaker: text" lines, raw
    time_start: UtcDatetime | None = None
    time_end: UtcDatetime | None = None
    token_count: int = 0
    compressed_text: str | None = None  # only ever fed to the summariser
    vector: list[float] | None = None
    created_at: UtcDatetime
    metadata: dict[str, MetaValue] = Field(default_factory=dict)  # its turns' (all alike)


class SummaryRecord(_Record):
    """Level-1: one key-information sentence linked many-to-one to its segment."""

    id: str
    user_id: str
    segment_id: str
    text: str
    vector: list[float] | None = None
    time_start: UtcDatetime | None = None
    time_end: UtcDatetime | None = None
    topic: str | None = None
    # The turns this sentence rests on: a subset of its segment's, except that a merge (of a
    # repeat at write time, or in sleep) holds the union of its inputs', which may lie in other
    # segments; each stored turn links its segment, and `get()` shows every one of them.
    # `attribution` says how they were found. Empty only on records built by hand; the write
    # path always fills them.
    source_turn_ids: list[str] = Field(default_factory=list)
    attribution: Attribution = Attribution.SEGMENT
    # The tail of the dialogue line before its first source line: an index-only key, so a
    # question worded like the line a fact answers finds the fact (`hymem.indexes.keys`).
    context: str = ""
    status: SummaryStatus = SummaryStatus.ACTIVE
    version: int = 1
    superseded_by: str | None = None
    previous_id: str | None = None  # the version this one replaced (consolidation)
    reason: str | None = None  # why it was superseded or deleted
    evidence_id: str | None = None  # the newer summary that justified a delete/update
    # Who wrote this version: the write path ("summary"), sleep ("consolidated") or the user
    # through update()/delete() ("user"); `created_at` says when. "fallback": the write path's
    # extractive summariser, standing in for a model summariser that failed on its buffer.
    origin: Literal["summary", "consolidated", "user", "fallback"] = "summary"
    created_at: UtcDatetime
    updated_at: UtcDatetime
    metadata: dict[str, MetaValue] = Field(default_factory=dict)  # its segment's
    # Schema 5. The memory this version belongs to: every version of one memory
    # shares it (the first version's id), so an agent keeps the id it was given across
    # updates. `valid_from` is when the fact was said (its source turns' time); `valid_to`,
    # set only when a newer value of the same fact superseded it, when that one was said.
    # `fact_key` is "subject|relation" where the write path recognised a single-valued fact
    # (`hymem.facts`): what the standing profile lists and write-time supersession matches on.
    memory_id: str = ""
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    fact_key: str | None = None

    @model_validator(mode="after")
    def _defaults(self) -> SummaryRecord:
        """A first version is its own memory, valid from when it was said (or written)."""
        if not self.memory_id:
            self.memory_id = self.id
        if self.valid_from is None:
            self.valid_from = self.time_start or self.time_end or self.created_at
        return self


class StatusChange(_Record):
    """A sleep-time change to an existing summary; applied without touching its text."""

    summary_id: str
    status: SummaryStatus
    superseded_by: str | None = None
    reason: str | None = None
    evidence_id: str | None = None
    # When the fact stopped holding (a newer value was said); None for a rewrite or a delete,
    # which end a version, not the fact's truth.
    valid_to: UtcDatetime | None = None
    # The summary's fact key, set when sleep reads the fact of a summary written before fact
    # keys (None leaves the stored key as it is).
    fact_key: str | None = None


class Hit(BaseModel):
    """One retrieved item with every score that placed it."""

    level: Level
    id: str
    user_id: str
    text: str
    segment_id: str  # for a segment hit, its own id
    # The turns the hit stands for: a segment's own, a summary's source turns.
    turn_ids: list[str] = Field(default_factory=list)
    attribution: Attribution | None = None  # summaries only: how `turn_ids` were found
    time_start: UtcDatetime | None = None
    time_end: UtcDatetime | None = None
    status: SummaryStatus | None = None
    metadata: dict[str, MetaValue] = Field(default_factory=dict)
    dense_score: float | None = None  # cosine similarity, higher is closer
    lexical_score: float | None = None  # BM25
    dense_rank: int | None = None  # 1-based
    lexical_rank: int | None = None
    fused_score: float = 0.0  # reciprocal-rank fusion
    # The search asked for lexical hits but the lexical index was unusable (damaged, awaiting a
    # rebuild): this hit was ranked by the dense branch alone.
    lexical_unavailable: bool = False
    # Summaries only: the memory's stable id (`id` is this version's) and when the fact held.
    memory_id: str | None = None
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None


class RoleUsage(BaseModel):
    """Model usage of one role; summed per ask, per operation and cumulatively."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    retries: int = 0
    fallbacks: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: RoleUsage) -> RoleUsage:
        return RoleUsage(
            **{f: getattr(self, f) + getattr(other, f) for f in RoleUsage.model_fields}
        )


class Usage(BaseModel):
    """Usage per role name ("summarise", "light_answer", "select", ...)."""

    roles: dict[str, RoleUsage] = Field(default_factory=dict)

    def add(self, role: str, usage: RoleUsage) -> None:
        self.roles[role] = self.roles.get(role, RoleUsage()) + usage

    def merge(self, other: Usage) -> None:
        for role, usage in other.roles.items():
            self.add(role, usage)

    @property
    def total(self) -> RoleUsage:
        out = RoleUsage()
        for usage in self.roles.values():
            out = out + usage
        return out


class AddResult(BaseModel):
    """What one add() or flush() accepted and wrote."""

    turn_ids: list[str] = Field(default_factory=list)  # accepted by this call (new or repeated)
    new_turn_ids: list[str] = Field(default_factory=list)  # first seen in this call
    segments_written: list[str] = Field(default_factory=list)
    summaries_written: list[str] = Field(default_factory=list)
    pending: int = 0  # turns of this user still waiting after the call
    error: str | None = None  # summariser failure; the turns stay pending and are retried
    # Segments the extractive summariser summarised because the model summariser failed on
    # their buffer (`summarise_fallback`); their summaries have origin "fallback".
    summarise_fallbacks: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    backend: str = ""  # "extractive" or the model spec, so results are never mislabelled
    # Write-time consolidation: summaries this call merged into an older one, older
    # summaries a newer value superseded, and summaries stored already ended (older values).
    merged: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)


class Answer(BaseModel):
    """The result of ask(): the answer and everything needed to audit how it was reached."""

    text: str
    question: str
    user_id: str
    path: Literal["light", "deep"]
    escalated: bool
    escalation_reason: Literal["verdict", "fallback", "forced"] | None = None
    complete: bool  # final verdict (light verdict on light-only answers, reflection otherwise)
    iterations: int
    evidence: list[Hit] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_ms: dict[str, float] = Field(default_factory=dict)
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    fallbacks: list[str] = Field(default_factory=list)  # "role: reason" for each fallback taken
    # What answered when a model role failed: "light" (the light answer stood in for a failed
    # deep answer) or "extractive" (the extractive roles, no model); None: the model answered.
    fallback: Literal["light", "extractive"] | None = None
    budget_exhausted: bool = False
    backend: str = ""
    as_of: UtcDatetime | None = None  # when the question was asked (naive UTC); None: now
    trace_id: str
