"""The systems under test. Each answers one LoCoMo question and says what it retrieved, what
it cost and which path it took, so every system is scored by the same code.

hymem variants go through `Memory.ask`; the baselines (`baselines.py`) call the same
`roles.deep_answer` with a different context, so model and prompt are held fixed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hymem.api.internals import store_of
from hymem.core.types import Answer, Hit, Level, Usage
from hymem.llm.tokens import count_tokens
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.backfill.locomo import LocomoConversation, LocomoQA

Path = Literal["light", "deep", "none"]
LIGHT_ROLES = ("light_answer",)
DEEP_ROLES = ("select", "deep_answer")

_DIA_ID = re.compile(r"(D\d+:\d+)$")


class SystemResult(BaseModel):
    """One system's answer to one question, with everything the report aggregates."""

    prediction: str
    retrieved_turn_ids: list[str] = Field(default_factory=list)  # LoCoMo dia_ids, ranked
    context_tokens: int = 0  # tokens of context shown to the answering role(s)
    usage: Usage = Field(default_factory=Usage)
    latency_ms: float = 0.0
    latency_stages: dict[str, float] = Field(default_factory=dict)
    path: Path = "none"
    escalated: bool = False
    escalation_reason: str | None = None
    iterations: int = 0
    backend: str = ""
    trace_id: str | None = None
    fallbacks: list[str] = Field(default_factory=list)


class System(Protocol):
    """Answers questions about conversations already ingested under `user_id`."""

    name: str

    def answer(
        self, mem: Memory, conv: LocomoConversation, qa: LocomoQA, user_id: str
    ) -> SystemResult: ...


def to_dia_id(turn_id: str) -> str:
    """Map a stored turn id back to its LoCoMo dia_id. The runner passes dia_ids as message ids;
    a store that namespaces them (e.g. "conv-26:D1:3") still ends with the dia_id."""
    m = _DIA_ID.search(turn_id)
    return m.group(1) if m else turn_id


Credit = Literal["source", "segment"]


def hit_turn_ids(
    mem: Memory, hits: Iterable[Hit], user_id: str, *, credit: Credit = "source"
) -> list[str]:
    """The stored turns behind retrieved hits, in hit order, each once: a segment hit gives its
    own turns; a summary hit its source turns (`credit="source"`, the honest measure: what
    the summary line actually says) or, for the older figure that reports must label as such,
    every turn of its segment (`credit="segment"`). A summary without source turns (built by
    hand) counts its segment's.

    This is the one place a hit becomes turns, for every benchmark."""
    hits = list(hits)
    need = [
        h.segment_id
        for h in hits
        if h.level == Level.SUMMARY and h.segment_id and (credit == "segment" or not h.turn_ids)
    ]
    seg_turns: dict[str, list[str]] = {}
    if need:
        for seg in store_of(mem).get_segments(user_id, list(dict.fromkeys(need))):
            seg_turns[seg.id] = seg.turn_ids
    out: list[str] = []
    for h in hits:
        if h.level == Level.SEGMENT or (credit == "source" and h.turn_ids):
            out.extend(h.turn_ids)
        else:
            out.extend(seg_turns.get(h.segment_id, []))
    return list(dict.fromkeys(out))


def hits_to_turn_ids(
    mem: Memory, hits: Iterable[Hit], user_id: str, *, credit: Credit = "source"
) -> list[str]:
    """`hit_turn_ids` as LoCoMo dia_ids."""
    turns = hit_turn_ids(mem, hits, user_id, credit=credit)
    return list(dict.fromkeys(to_dia_id(t) for t in turns))


def answer_fields(res: SystemResult) -> dict[str, Any]:
    """The `AnswerRecord` fields every benchmark copies from a system's result, stamped now."""
    return {
        "prediction": res.prediction,
        "retrieved_turn_ids": res.retrieved_turn_ids,
        "context_tokens": res.context_tokens,
        "path": res.path,
        "escalated": res.escalated,
        "escalation_reason": res.escalation_reason,
        "iterations": res.iterations,
        "latency_ms": res.latency_ms,
        "latency_stages": res.latency_stages,
        "backend": res.backend,
        "trace_id": res.trace_id,
        "fallbacks": res.fallbacks,
        "finished_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        **usage_split(res.usage),
    }


def usage_split(usage: Usage) -> dict[str, int]:
    """Calls and tokens of the light and the deep path separately (reflection on its own)."""
    roles = usage.roles

    def total(names: Iterable[str], attr: str) -> int:
        return sum(getattr(roles[n], attr) for n in names if n in roles)

    out: dict[str, int] = {}
    for label, names in (("light", LIGHT_ROLES), ("deep", DEEP_ROLES), ("reflect", ("reflect",))):
        out[f"{label}_calls"] = total(names, "calls")
        out[f"{label}_tokens"] = total(names, "prompt_tokens") + total(names, "completion_tokens")
    out["calls"] = usage.total.calls
    out["tokens"] = usage.total.total_tokens
    return out


class HymemSystem:
    """hymem itself or one of its ablations, all through `Memory.ask`."""

    def __init__(
        self,
        name: str,
        *,
        depth: Literal["auto", "light", "deep"] = "auto",
        max_iterations: int | None = None,
    ) -> None:
        self.name = name
        self.depth = depth
        self.max_iterations = max_iterations

    def answer(
        self, mem: Memory, conv: LocomoConversation, qa: LocomoQA, user_id: str
    ) -> SystemResult:
        t0 = time.perf_counter()
        ans: Answer = mem.ask(
            qa.question, user_id=user_id, depth=self.depth, max_iterations=self.max_iterations
        )
        wall_ms = (time.perf_counter() - t0) * 1000.0
        return answer_result(ans, wall_ms, hits_to_turn_ids(mem, ans.evidence, user_id))


def answer_result(ans: Answer, wall_ms: float, turn_ids: list[str]) -> SystemResult:
    """A `Memory.ask` answer as a SystemResult; `turn_ids` are its evidence as the benchmark
    names turns."""
    return SystemResult(
        prediction=ans.text,
        retrieved_turn_ids=turn_ids,
        context_tokens=sum(count_tokens(h.text) for h in ans.evidence),
        usage=ans.usage,
        latency_ms=wall_ms,
        latency_stages=dict(ans.latency_ms),
        path=ans.path,
        escalated=ans.escalated,
        escalation_reason=ans.escalation_reason,
        iterations=ans.iterations,
        backend=ans.backend,
        trace_id=ans.trace_id,
        fallbacks=list(ans.fallbacks),
    )


ALL_SYSTEMS = (
    "hymem",
    "light-only",
    "deep-only",
    "no-reflection",
    "full-context",
    "naive-rag-k3",
    "naive-rag-k5",
    "naive-rag-k10",
)
