"""Feeding LoCoMo conversations into a Memory: one `add` per turn in session order, then a
flush (and a sleep when asked), with the construction cost of each conversation. A conversation
whose `ingest/<id>.json` exists is in the store already and is not fed again; one whose feed
was interrupted is fed again whole, and its cost is summed over the invocations that fed it
(`ingest_tally`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymem.api.internals import roles_of
from hymem.backfill.locomo import conversation_messages
from hymem.core.errors import LLMUnavailable
from hymem.core.logging import get_logger
from hymem.core.types import AddResult, Usage
from hymem.evaluation.ingest_tally import IngestTally, partial_path
from hymem.evaluation.progress import make_progress
from pydantic import BaseModel

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.backfill.locomo import LocomoConversation

log = get_logger("hymem.evaluation.locomo_ingest")


def ingest_conversation(
    mem: Memory,
    conv: LocomoConversation,
    *,
    sleep: bool,
    on_turn: Callable[[], None],
    tally: IngestTally | None = None,
) -> dict[str, Any]:
    """Feed turns one `add` per turn in session order (the session date-time as timestamp,
    dia_id as message id), flush, optionally sleep; returns the construction cost. `tally`
    holds what earlier invocations that fed this conversation spent (`ingest_tally`), so a
    resumed feed reports the whole conversation's cost, not only its own part."""
    user_id = conv.sample_id
    tally = tally or IngestTally()
    turns = 0
    sleep_report: dict[str, Any] | None = None
    with tally.feeding():
        for session_id, when, messages in conversation_messages(conv):
            for msg in messages:
                tally.count(mem.add([msg], user_id=user_id, session_id=session_id, timestamp=when))
                turns += 1
                on_turn()
        res = mem.flush(user_id=user_id)
        tally.count(res)
        check_flushed(user_id, res)
        if sleep:
            tally.stage("sleep")
            report = mem.sleep(user_id=user_id)
            sleep_usage = getattr(report, "usage", None)
            if isinstance(sleep_usage, Usage):
                tally.spend(sleep_usage)
            if isinstance(report, BaseModel):
                sleep_report = report.model_dump(mode="json", exclude={"planned", "usage"})
        tally.stop()
    ingest_s, sleep_s = tally.seconds("ingest"), tally.seconds("sleep")
    fields = tally.fields()
    return {
        "conversation": user_id,
        "turns": turns,
        "segments": fields["segments"],
        "summaries": fields["summaries"],
        "calls": fields["calls"],
        "tokens": fields["tokens"],
        "usage": fields["usage"],
        "ingest_seconds": round(ingest_s, 3),
        "sleep_seconds": round(sleep_s, 3),
        "seconds": round(ingest_s + sleep_s, 3),
        "parts": fields["parts"],
        "sleep": sleep_report,
        "backend": roles_of(mem).label,
    }


def check_flushed(user_id: str, res: AddResult) -> AddResult:
    """`res`, a flush's result; LLMUnavailable when the summariser left turns pending (they
    are durable, so a rerun retries them)."""
    if res.pending:
        raise LLMUnavailable(
            f"{user_id}: {res.pending} turns still pending after flush ({res.error}); "
            "rerun with the same --out to retry",
            role="summarise",
        )
    return res


def flush_user(mem: Memory, user_id: str) -> AddResult:
    """Flush a user's pending turns; LLMUnavailable when the summariser left some pending
    (`check_flushed`)."""
    return check_flushed(user_id, mem.flush(user_id=user_id))


def ingest_all(
    mem: Memory,
    convs: Sequence[LocomoConversation],
    out: Path,
    *,
    sleep: bool,
    show_progress: bool = True,
) -> list[str]:
    """Feeds every conversation not yet in the store; returns the ids fed now."""
    todo = [c for c in convs if not (out / "ingest" / f"{c.sample_id}.json").exists()]
    done: list[str] = []
    with make_progress(show_progress) as progress:
        for conv in todo:
            n_turns = sum(len(msgs) for _, _, msgs in conversation_messages(conv))
            task = progress.add_task(f"ingest {conv.sample_id}", total=n_turns)
            tally = IngestTally(partial_path(out, conv.sample_id))
            cost = ingest_conversation(
                mem,
                conv,
                sleep=sleep,
                on_turn=functools.partial(progress.advance, task),
                tally=tally,
            )
            # Written last: its presence means the conversation is fully in the store.
            (out / "ingest" / f"{conv.sample_id}.json").write_text(
                json.dumps(cost, indent=2), encoding="utf-8"
            )
            tally.finish()
            done.append(conv.sample_id)
            log.info("eval.ingested", **{k: v for k, v in cost.items() if k != "usage"})
    return done


def settle_lexical(mem: Memory) -> dict[str, int]:
    """Rebuild the store's BM25 index from its rows, before anything is searched; returns
    documents per level. Tantivy's BM25 statistics depend on the index's write history, not
    only on what it holds: a replaced or deleted document is still counted (document count,
    term frequencies, total tokens) until a background merge drops it, and a merge over
    deletions re-estimates the total tokens from quantised field lengths. Which merges have
    run depends on timing, and an interruption changes the history (a Ctrl-C inside a commit
    rolls it back and rebuilds the index then; a rerun starts a new writer): a resumed run
    scored differently from a clean one, and both from the same store after `hymem reindex`.
    After this step every run searches the index a rebuild makes, whose scores depend on the
    stored rows alone. It costs about 0.2 s per 1,000 summaries and segments."""
    counts = mem.reindex()
    log.info("eval.lexical_rebuilt", **counts)
    return counts


__all__ = [
    "check_flushed",
    "flush_user",
    "ingest_all",
    "ingest_conversation",
    "settle_lexical",
]
