"""Baselines answered by the same `deep_answer` role as hymem's deep path, so the only thing
that differs between systems is the context: every turn (full-context) or the k turns most
similar to the question under the same embedder (naive RAG over raw turns)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import numpy as np
from hymem.api.internals import embedder_of, roles_of
from hymem.core.types import Usage
from hymem.evaluation.systems import SystemResult
from hymem.llm.roles import ContextItem
from hymem.llm.tokens import count_tokens

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.backfill.locomo import LocomoConversation, LocomoQA


def conversation_items(conv: LocomoConversation) -> list[ContextItem]:
    """Every turn as a passage, in session order, id = dia_id, dated by its session."""
    return [
        ContextItem(
            id=turn.dia_id,
            text=f"{turn.speaker}: {turn.render_text()}",
            time_start=session.date_time,
            time_end=session.date_time,
        )
        for session in conv.sessions
        for turn in session.turns
    ]


def answer_with(
    mem: Memory, question: str, passages: list[ContextItem], retrieve_ms: float
) -> SystemResult:
    t0 = time.perf_counter()
    res = roles_of(mem).deep_answer(question, passages, [])
    answer_ms = (time.perf_counter() - t0) * 1000.0
    usage = Usage()
    usage.add(str(res.role), res.usage)
    return SystemResult(
        prediction=res.output.answer,
        retrieved_turn_ids=[p.id for p in passages],
        context_tokens=sum(count_tokens(p.text) for p in passages),
        usage=usage,
        latency_ms=retrieve_ms + answer_ms,
        latency_stages={"retrieve": retrieve_ms, "deep_answer": answer_ms},
        path="none",
        backend=roles_of(mem).label,
        fallbacks=[f"deep_answer: {res.fallback_reason}"] if res.fallback else [],
    )


class FullContextSystem:
    """The whole conversation in one prompt: the upper bound on what retrieval can give."""

    name = "full-context"

    def answer(
        self, mem: Memory, conv: LocomoConversation, qa: LocomoQA, user_id: str
    ) -> SystemResult:
        return answer_with(mem, qa.question, conversation_items(conv), 0.0)


class NaiveRagSystem:
    """Dense top-k over raw turns with the memory's own embedder; one in-memory numpy matrix
    per conversation, built on first use and shared by concurrent questions."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.name = f"naive-rag-k{k}"
        self._index: dict[str, tuple[list[ContextItem], np.ndarray]] = {}
        self._lock = threading.Lock()

    def _turn_index(
        self, mem: Memory, conv: LocomoConversation
    ) -> tuple[list[ContextItem], np.ndarray]:
        with self._lock:
            cached = self._index.get(conv.sample_id)
            if cached is None:
                items = conversation_items(conv)
                matrix = np.asarray(
                    embedder_of(mem).embed([i.text for i in items]), dtype=np.float32
                )
                cached = self._index[conv.sample_id] = (items, matrix)
            return cached

    def answer(
        self, mem: Memory, conv: LocomoConversation, qa: LocomoQA, user_id: str
    ) -> SystemResult:
        items, matrix = self._turn_index(mem, conv)
        t0 = time.perf_counter()
        query = np.asarray(embedder_of(mem).embed([qa.question]), dtype=np.float32)[0]
        top = top_k_indices(matrix @ query, self.k)
        # Shown to the answerer in conversation order, as a reader would see them.
        passages = [items[i] for i in sorted(top)]
        result = answer_with(mem, qa.question, passages, (time.perf_counter() - t0) * 1000.0)
        result.retrieved_turn_ids = [items[i].id for i in top]  # ranked, best first
        return result


def top_k_indices(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k highest scores, best first, ties broken by position (stable)."""
    k = min(k, len(scores))
    if k <= 0:
        return []
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:k]]
