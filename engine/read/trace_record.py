"""`Trace`: the typed record of one ask, as `Memory.traces()` returns it.

The reader builds one `Trace` per ask (`hymem.read.traces.build_trace`), and the `traces`
table keeps it as JSON (`Trace.row`, fields in their declared order). Rows written by older
versions lack fields added since, and rows from newer versions, or ones an evaluation enriched
(`category`, gold answers, scores), carry fields this version does not know. Both load: every
field but the ids and the time has a default, and unknown fields are kept (`model_extra`)
rather than refused, so a trace survives a round trip unchanged.
Nested maps may also arrive as JSON text (a trace copied through a CSV or a log line) and a
`Usage` dump (`{"roles": {...}}`) is accepted for `usage`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from hymem.core.logging import get_logger
from hymem.core.time import UtcDatetime
from hymem.core.types import RoleUsage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

log = get_logger("hymem.read.trace_record")


def _json_text(value: Any) -> Any:
    """A JSON object or list given as text, decoded; anything else unchanged."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


class TraceRound(BaseModel):
    """One round of the read loop: what it retrieved and read, by id, and what it decided."""

    model_config = ConfigDict(extra="allow")

    index: int
    summary_ids: list[str] = Field(default_factory=list)  # light top-k
    candidate_ids: list[str] = Field(default_factory=list)  # deep top-N
    selected_ids: list[str] = Field(default_factory=list)  # chosen by event selection
    segment_ids: list[str] = Field(default_factory=list)  # Level-2 read by the deep answer
    turn_ids: list[str] = Field(default_factory=list)  # turns those segments cover
    summary_turn_ids: list[str] = Field(default_factory=list)  # source turns of the light hits
    query: str = ""
    path: str = "light"  # "light" | "deep"
    light_complete: bool | None = None
    escalated: bool = False
    escalation_reason: str | None = None
    select_limited: bool = False  # the token budget trimmed the selection stage
    answer: str = ""
    reflect_complete: bool | None = None
    new_question: str | None = None


class Trace(BaseModel):
    """One ask: question, path taken and why, cost per stage, ids read, answer (ARCHITECTURE
    §8). The dashboard and the evaluation read these; fields not listed here are kept."""

    model_config = ConfigDict(extra="allow")

    trace_id: str
    user_id: str
    question: str = ""
    depth: str = "auto"  # requested: "auto" | "light" | "deep"
    plan: dict[str, Any] | None = None  # the sizes read with (k, n_deep, batch, ...)
    path: str | None = None  # taken: "light" | "deep"; None when the ask failed
    escalated: bool = False
    escalation_reason: str | None = None
    iterations: int = 0
    complete: bool = False
    answer: str = ""
    backend: str = ""
    total_tokens: int = 0
    total_calls: int = 0
    latency_ms_total: float = 0.0
    usage: dict[str, RoleUsage] = Field(default_factory=dict)  # per role
    latency_ms: dict[str, float] = Field(default_factory=dict)  # per stage, and "total"
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    fallbacks: list[str] = Field(default_factory=list)
    fallback: str | None = None  # "light" / "extractive": what answered for a failed model
    notes: list[str] = Field(default_factory=list)
    budget_exhausted: bool = False
    budget_stops: list[str] = Field(default_factory=list)
    filters: dict[str, Any] | None = None  # the metadata filter every retrieval applied
    summary_ids: list[str] = Field(default_factory=list)  # evidence, by level
    segment_ids: list[str] = Field(default_factory=list)
    turn_ids: list[str] = Field(default_factory=list)
    rounds: list[TraceRound] = Field(default_factory=list)
    error: str | None = None  # "ErrorType: message" when the ask raised
    as_of: UtcDatetime | None = None  # the moment the question was asked, when given
    created_at: UtcDatetime  # naive UTC

    @field_validator("usage", mode="before")
    @classmethod
    def _usage_by_role(cls, value: Any) -> Any:
        value = _json_text(value)
        if isinstance(value, Mapping) and isinstance(value.get("roles"), Mapping):
            value = value["roles"]  # a whole Usage dump
        if isinstance(value, Mapping):
            return {role: _json_text(u) for role, u in value.items()}
        return value

    @field_validator("latency_ms", "prompt_versions", "rounds", mode="before")
    @classmethod
    def _decoded(cls, value: Any) -> Any:
        value = _json_text(value)
        return [_json_text(v) for v in value] if isinstance(value, list) else value

    @property
    def extra(self) -> dict[str, Any]:
        """Fields this version does not define (e.g. an evaluation's `category`)."""
        return dict(self.model_extra or {})

    def row(self) -> dict[str, Any]:
        """The trace as `Storage.write_trace` stores it: plain JSON in the declared order
        (the fields set, so a failed ask's rounds keep only the ids they had), except
        `created_at`, a naive UTC datetime the store filters on."""
        row = self.model_dump(mode="json", exclude_unset=True)
        row["created_at"] = self.created_at
        return row


def traces_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Trace]:
    """Stored rows as `Trace`s, in order. A row that cannot be read as a trace (hand-edited,
    damaged) is logged as `trace.unreadable` and left out: traces are observability, and one
    bad row must not hide every other ask from the dashboard."""
    out: list[Trace] = []
    for row in rows:
        try:
            out.append(Trace.model_validate(row))
        except ValidationError as exc:
            log.warning(
                "trace.unreadable",
                trace_id=str(row.get("trace_id")),
                error=str(exc.errors(include_url=False)[:3]),
            )
    return out


__all__ = ["Trace", "TraceRound", "traces_from_rows"]
