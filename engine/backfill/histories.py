"""What a backfill reads: users' histories, each a list of sessions of add()-ready messages.

Sources: LoCoMo conversations (user = sample id, message ids = dia ids) and JSON Lines of
messages, one per line:

    {"user_id": "u1", "session_id": "s1", "id": "m1", "speaker": "user", "text": "...",
     "timestamp": "2024-05-01T10:00:00"}

`user_id` and `text` are required (`role`/`content` are read as `speaker`/`text`); `session_id`
defaults to "default". Lines are grouped by user, then by session in the order sessions first
appear; message order within a session is the file's. Without message ids, a turn's id is the
content id `add()` gives it (user, session, position, text), so re-running a backfill of the
same file stores nothing twice either way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hymem.backfill.locomo import LocomoConversation, conversation_messages
from hymem.core.errors import UserInputError
from hymem.core.validation import check_user_id


@dataclass(frozen=True)
class Session:
    session_id: str
    messages: list[dict[str, Any]]
    timestamp: object = None  # the add() call's timestamp (messages may carry their own)


@dataclass(frozen=True)
class UserHistory:
    user_id: str
    sessions: list[Session] = field(default_factory=list)

    @property
    def turn_count(self) -> int:
        return sum(len(s.messages) for s in self.sessions)


def locomo_histories(conversations: Iterable[LocomoConversation]) -> list[UserHistory]:
    """LoCoMo conversations (`hymem.backfill.locomo`) as histories."""
    return [
        UserHistory(
            conv.sample_id,
            [Session(sid, msgs, when) for sid, when, msgs in conversation_messages(conv) if msgs],
        )
        for conv in conversations
    ]


def _message(row: Any, where: str) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(row, dict):
        raise UserInputError(f"{where}: a message must be a JSON object")
    user = row.get("user_id")
    if not isinstance(user, str) or not user:
        raise UserInputError(f"{where}: needs a non-empty string user_id")
    check_user_id(user)
    text = row.get("text", row.get("content"))
    if not isinstance(text, str):
        raise UserInputError(f"{where}: needs a string text (or content)")
    session = row.get("session_id", "default")
    if not isinstance(session, str) or not session:
        raise UserInputError(f"{where}: session_id must be a non-empty string")
    message: dict[str, Any] = {"text": text, "speaker": row.get("speaker", row.get("role"))}
    for key in ("id", "timestamp"):
        if row.get(key) is not None:
            message[key] = row[key]
    if message["speaker"] is None:
        del message["speaker"]
    return user, session, message


def read_jsonl(path: Path) -> list[UserHistory]:
    """Every user's history in a JSON Lines file of messages (see the module docstring);
    a bad line is a `UserInputError` naming it, before anything is stored."""
    users: dict[str, dict[str, list[dict[str, Any]]]] = {}
    try:
        with path.open(encoding="utf-8") as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    row = json.loads(raw)
                except ValueError as exc:
                    raise UserInputError(f"{path}, line {n}: not JSON ({exc})") from None
                user, session, message = _message(row, f"{path}, line {n}")
                users.setdefault(user, {}).setdefault(session, []).append(message)
    except UnicodeDecodeError as exc:
        raise UserInputError(f"{path}: not UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return [
        UserHistory(user, [Session(sid, msgs) for sid, msgs in sessions.items()])
        for user, sessions in users.items()
    ]


__all__ = ["Session", "UserHistory", "locomo_histories", "read_jsonl"]
