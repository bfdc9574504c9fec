"""Feeding one LongMemEval question's history into hymem: the question is its own user, each
session one `add()` (oldest first, dated by `haystack_dates`, every turn under its benchmark id
`<session_id>_<index>` so retrieved turns map back exactly), then one `flush`.

Re-feeding is idempotent (a repeated message id is a no-op), so a question interrupted
mid-ingestion is simply fed again on the next run; its cost is summed over the invocations
that fed it (`ingest_tally`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hymem.api.internals import roles_of
from hymem.core.errors import InvalidMessageError
from hymem.core.logging import get_logger
from hymem.core.types import AddResult
from hymem.evaluation.ingest_tally import IngestTally
from hymem.evaluation.locomo_ingest import check_flushed

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.evaluation.longmemeval.data import LmeQuestion, LmeSession

log = get_logger("hymem.evaluation.longmemeval.ingest")


def session_messages(session: LmeSession) -> list[dict[str, Any]]:
    """add()-ready messages of a session's non-empty turns, `role` as the speaker."""
    return [
        {"role": t.role, "content": t.content, "id": t.id, "timestamp": session.date}
        for t in session.turns
        if t.usable
    ]


def add_session(
    mem: Memory, question: LmeQuestion, session: LmeSession, rejected: list[str]
) -> AddResult | None:
    """One add() for the session. A message the write path refuses (e.g. over its size limit)
    is dropped, named in the log and in `rejected`, and the rest of the session is added."""
    messages = session_messages(session)
    while messages:
        try:
            return mem.add(
                messages,
                user_id=question.question_id,
                session_id=session.id,
                timestamp=session.date,
            )
        except InvalidMessageError as exc:
            bad = messages.pop(exc.index)
            rejected.append(bad["id"])
            log.warning(
                "longmemeval.turn_rejected",
                question_id=question.question_id,
                turn_id=bad["id"],
                reason=exc.reason,
            )
    return None


def ingest_question(
    mem: Memory,
    question: LmeQuestion,
    *,
    on_turns: Callable[[int], None],
    tally: IngestTally | None = None,
) -> dict[str, Any]:
    """Feed the whole history and flush; returns the construction cost. LLMUnavailable when
    the summariser left turns pending (`check_flushed`). `tally` holds what earlier
    invocations that fed this question spent (`ingest_tally`), so a resumed feed reports the
    whole question's cost, not only its own part."""
    tally = tally or IngestTally()
    turns = 0
    rejected: list[str] = []
    with tally.feeding():
        for session in question.sessions_in_time_order():
            res = add_session(mem, question, session, rejected)
            if res is not None:
                tally.count(res)
                turns += len(res.turn_ids)
            on_turns(len(session.turns))
        res = mem.flush(user_id=question.question_id)
        tally.count(res)
        check_flushed(question.question_id, res)
        tally.stop()
    fields = tally.fields()
    return {
        "question_id": question.question_id,
        "question_type": question.question_type,
        "sessions": len(question.sessions),
        "turns": turns,
        "turns_skipped": question.turn_count - turns,
        "turns_rejected": rejected,
        "segments": fields["segments"],
        "summaries": fields["summaries"],
        "calls": fields["calls"],
        "tokens": fields["tokens"],
        "usage": fields["usage"],
        "seconds": round(tally.seconds("ingest"), 3),
        "parts": fields["parts"],
        "backend": roles_of(mem).label,
    }


__all__ = ["add_session", "ingest_question", "session_messages"]
