"""`Memory.import_chat`: a chat export stored as one user's turns, a conversation per session.

All or nothing for the file: it is read whole and every turn checked as `add()` checks it
(`chat_formats`) before the first write, so a file that fails anywhere, in its last line
included, stores nothing. Then each conversation is one `add()` of its kept messages and one
`flush()` stores the rest. Every turn's id is fixed by the file (the export's own message id,
or one made from the message's place in it), so an import stopped part-way by a crash or a store
failure is finished by running it again: turns already stored are not stored twice
(`new_turns` counts only the rest). Messages the export holds but that are not turns are
counted by reason in the report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hymem.imports.chat_formats import read_chat_export
from hymem.write.ingestor import Ingestor
from hymem.write.request import add_request
from pydantic import BaseModel


class ChatImportReport(BaseModel):
    user_id: str
    format: str
    conversations: int = 0
    messages: int = 0  # messages kept as turns
    new_turns: int = 0  # of which new to this memory (a re-import: 0)
    skipped: dict[str, int] = {}  # reason -> count: not turns, and why
    pending: int = 0  # turns left pending (a summariser failure: the next flush retries)


def import_chat(
    ingestor: Ingestor,
    source: Path,
    *,
    fmt: str,
    user_id: str,
    progress: Callable[[int, int], None] | None = None,
) -> ChatImportReport:
    """Read and check the whole export first (a bad file stores nothing), then add it
    conversation by conversation; `progress(done, total)` counts conversations. Stopped
    part-way, the same call again finishes it without storing a turn twice."""
    export = read_chat_export(source, fmt, user_id)
    sessions = export.history.sessions
    report = ChatImportReport(
        user_id=user_id,
        format=fmt,
        conversations=len(sessions),
        messages=export.messages,
        skipped=dict(sorted(export.skipped.items())),
    )
    for done, session in enumerate(sessions, 1):
        result = ingestor.add(
            add_request(
                session.messages,
                user_id=user_id,
                session_id=session.session_id,
                timestamp=session.timestamp,
            )
        )
        report.new_turns += len(result.new_turn_ids)
        if progress is not None:
            progress(done, len(sessions))
    report.pending = ingestor.flush(user_id=user_id).pending
    return report


__all__ = ["ChatImportReport", "import_chat"]
