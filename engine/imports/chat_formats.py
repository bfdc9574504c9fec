"""Chat exports read into one user's history: ChatGPT, Claude and plain JSON Lines.

Each conversation becomes a session (`session_id` = the conversation's id) and each kept message
a turn whose id is the export's own message id, so importing the same export twice stores
nothing twice. What is not a turn is counted, never dropped silently (`ChatExport.skipped`):

* ChatGPT (`conversations.json` from a data export): each conversation's `mapping` is a tree of
  message nodes; only the branch the user ended on is read, from `current_node` back to the
  root (an edited prompt leaves its old branch beside it: "other_branch"); without a current
  node, the branch that follows each node's last child from the root. System and tool
  messages, hidden ones (weight 0, or marked hidden from the conversation) and messages with no
  text are skipped. An image or file the message points to is not in the file: its text is
  kept, and the pointer counted ("attachment_absent").
* Claude (`conversations.json`): each conversation's `chat_messages`; where messages name a
  parent and the conversation its `current_leaf_message_uuid`, only that branch is read.
  `text`, else the text blocks of `content`; an attachment's `extracted_content` is appended to
  its message; a file named without its content is counted ("attachment_absent").
* JSON Lines: one message per line with `text` (or `content`), optional `id`, `speaker` (or
  `role`; without either the message is the user's), `timestamp` and `session_id` (or
  `conversation_id`); a `user_id`, where given, must be the importing user's.

A message without an id of its own gets one from its place, the same on every read: ChatGPT
"<conversation>#<node key>", Claude "<conversation>#<index in chat_messages>", JSON Lines
"<session>#<n>" (its n-th line of that session). An id is one message: the same id again with
the same speaker and text (a conversation branched into a new one) is kept once and counted
("repeated_id"); with other content the export is refused, never one of the two dropped.

The whole file is read and every turn checked as `add()` will check it (text size, speaker, id
length, timestamps: `chat_schema` says which times are read how) before anything is stored;
a file that fails anywhere is a `ChatExportError` naming the conversation or line and the field.
The file is bounded (`MAX_EXPORT_BYTES`) and so is its nesting (the JSON parser's recursion
limit, about 1,000 levels where a real export has ten); a message tree that loops is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from hymem.backfill.histories import Session, UserHistory
from hymem.core.errors import ChatExportError, InvalidMessageError, UserInputError
from hymem.core.textclean import normalise_text
from hymem.core.validation import check_session_id
from hymem.imports.chat_schema import (
    EPOCH,
    ClaudeConversation,
    ClaudeMessage,
    GptConversation,
    GptMessage,
    JsonlMessage,
    validation_reason,
)
from hymem.write.messages import normalise_message
from pydantic import BaseModel, ValidationError

FORMATS = ("chatgpt", "claude", "jsonl")
KEPT_ROLES = {"user": "user", "human": "user", "assistant": "assistant"}
JSONL_DEFAULT_SPEAKER = "user"  # a JSON Lines message naming no speaker: as add("text") reads it
# A file this large is refused before it is read: parsed JSON takes several times its size in
# memory, and the whole export is held until it has all been checked.
MAX_EXPORT_BYTES = 1 << 30
_Model = TypeVar("_Model", bound=BaseModel)


@dataclass
class ChatExport:
    history: UserHistory
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> messages (or pointers)

    @property
    def messages(self) -> int:
        return self.history.turn_count


def read_chat_export(path: Path, fmt: str, user_id: str) -> ChatExport:
    """The export at `path` in format `fmt` ("chatgpt", "claude" or "jsonl") as `user_id`'s,
    read whole and checked; `ChatExportError` where it is not the format."""
    readers: dict[str, Callable[[Path, str], ChatExport]] = {
        "chatgpt": _chatgpt,
        "claude": _claude,
        "jsonl": _jsonl,
    }
    if fmt not in readers:
        raise UserInputError(f"unknown chat export format {fmt!r}: use one of {', '.join(FORMATS)}")
    return readers[fmt](path, user_id)


# --- the file -----------------------------------------------------------------------------
def _text_of(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_EXPORT_BYTES:
            raise ChatExportError(
                f"{path}: {size:,} bytes; the limit is {MAX_EXPORT_BYTES:,} bytes for one export"
            )
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ChatExportError(
            f"{path}: not UTF-8 (byte {exc.start}: {exc.reason}); exports are UTF-8 JSON"
        ) from None
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:  # the C parser recurses per level: the depth bound
        raise ChatExportError(f"{where}: nested too deeply to be a chat export") from None
    except ValueError as exc:
        raise ChatExportError(f"{where}: not JSON ({exc})") from None


def _conversations(path: Path) -> list[Any]:
    data = _loads(_text_of(path), str(path))
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list):
        raise ChatExportError(f"{path}: expected a JSON list of conversations")
    return data


def _show(value: str, limit: int = 80) -> str:
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def _conversation(
    path: Path, n: int, raw: Any, keys: tuple[str, ...]
) -> tuple[str, str, dict[str, Any]]:
    """How errors name conversation `n`: its place ("conversation 3 ('abc')") and the same
    after the file's path; and its object."""
    if not isinstance(raw, dict):
        raise ChatExportError(f"{path}: conversation {n}: a conversation must be a JSON object")
    cid = next((raw[k] for k in keys if isinstance(raw.get(k), str) and raw[k]), None)
    place = f"conversation {n} ({_show(cid)})" if cid else f"conversation {n}"
    return place, f"{path}: {place}", raw


def _validate(model: type[_Model], raw: dict[str, Any], where: str) -> _Model:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ChatExportError(f"{where}: {validation_reason(exc)}") from None


def _blank(text: str) -> bool:
    return not normalise_text(text)


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


class _Turns:
    """The export being built: each turn checked as `add()` will check it, ids one message."""

    def __init__(self, user_id: str) -> None:
        self.export = ChatExport(UserHistory(user_id))
        self.skipped = self.export.skipped
        self._ids: dict[str, tuple[str, bytes]] = {}  # id -> (place, digest of its content)

    def session_id(self, value: str, where: str, name: str) -> str:
        try:
            return check_session_id(value)
        except UserInputError as exc:
            raise ChatExportError(f"{where}: {name} cannot be a session id: {exc}") from None

    def turn(
        self, place: str, where: str, mid: str, speaker: str, text: str, when: datetime | None
    ) -> dict[str, Any] | None:
        """The add()-ready message, None where it repeats one already read (counted)."""
        message: dict[str, Any] = {"id": mid, "speaker": speaker, "text": text}
        if when is not None:
            message["timestamp"] = _iso(when)
        try:
            norm = normalise_message(message, default_time=EPOCH)
        except InvalidMessageError as exc:
            raise ChatExportError(f"{where}: message {_show(mid)}: {exc.reason}") from None
        key = norm.id or mid
        content = f"{norm.speaker}\x00{norm.text}".encode()
        digest = hashlib.blake2b(content, digest_size=16).digest()
        first = self._ids.get(key)
        if first is None:
            self._ids[key] = (place, digest)
            return message
        if first[1] != digest:
            raise ChatExportError(
                f"{where}: id {_show(key)} is also {first[0]}'s, with other content: one id "
                "must be one message (give one of them another id)"
            )
        self.skipped["repeated_id"] += 1
        return None

    def session(self, sid: str, turns: list[dict[str, Any]], when: datetime | None) -> None:
        if turns:
            self.export.history.sessions.append(Session(sid, turns, _iso(when)))


# --- ChatGPT ------------------------------------------------------------------------------
def _chatgpt(path: Path, user_id: str) -> ChatExport:
    out = _Turns(user_id)
    for n, raw in enumerate(_conversations(path)):
        place, where, data = _conversation(path, n, raw, ("conversation_id", "id"))
        conv = _validate(GptConversation, data, where)
        cid = conv.conversation_id or conv.id
        if not cid:
            raise ChatExportError(f"{where}: id: neither conversation_id nor id is given")
        sid = out.session_id(cid, where, "its id")
        branch = _chatgpt_branch(conv, where)
        held = sum(1 for node in conv.mapping.values() if node.message is not None)
        out.skipped["other_branch"] += held - len(branch)
        turns = []
        for key, message in branch:
            turn = _chatgpt_turn(out, place, where, f"{cid}#{key}", message)
            if turn is not None:
                turns.append(turn)
        out.session(sid, turns, conv.create_time)
    return out.export


def _chatgpt_branch(conv: GptConversation, where: str) -> list[tuple[str, GptMessage]]:
    """(node key, message) from the root to the current node, oldest first; without a current
    node, the branch that follows each node's last child (the latest edit)."""
    mapping = conv.mapping
    leaf = conv.current_node if conv.current_node in mapping else _chatgpt_last_leaf(conv, where)
    path: list[tuple[str, GptMessage]] = []
    seen: set[str] = set()
    while leaf:
        node = mapping.get(leaf)
        if node is None:
            raise ChatExportError(f"{where}: mapping: a node's parent {_show(leaf)} is not in it")
        if leaf in seen:
            raise ChatExportError(f"{where}: mapping: the message tree loops at {_show(leaf)}")
        seen.add(leaf)
        if node.message is not None:
            path.append((leaf, node.message))
        leaf = node.parent
    return path[::-1]


def _chatgpt_last_leaf(conv: GptConversation, where: str) -> str | None:
    mapping = conv.mapping
    roots = [key for key, node in mapping.items() if not node.parent]
    if not roots:
        if mapping:
            raise ChatExportError(f"{where}: mapping: no root node (each names a parent)")
        return None
    leaf, seen = roots[0], {roots[0]}
    while children := mapping[leaf].children:
        leaf = children[-1]
        if leaf not in mapping:
            raise ChatExportError(f"{where}: mapping: a node's child {_show(leaf)} is not in it")
        if leaf in seen:
            raise ChatExportError(f"{where}: mapping: the message tree loops at {_show(leaf)}")
        seen.add(leaf)
    return leaf


def _chatgpt_turn(
    out: _Turns, place: str, where: str, fallback_id: str, message: GptMessage
) -> dict[str, Any] | None:
    role = message.author.role if message.author else None
    if role not in KEPT_ROLES:
        out.skipped[f"role_{role}"[:64]] += 1
        return None
    meta = message.metadata or {}
    if message.weight == 0 or meta.get("is_visually_hidden_from_conversation"):
        out.skipped["hidden"] += 1
        return None
    content = message.content
    texts: list[str] = []
    for part in (content.parts if content else None) or []:
        if isinstance(part, str):
            texts.append(part)
        else:
            out.skipped["attachment_absent"] += 1
    if content is not None and isinstance(content.text, str):
        texts.append(content.text)
    text = "\n".join(t for t in texts if t.strip()).strip()
    if _blank(text):
        out.skipped["empty"] += 1
        return None
    mid = message.id or fallback_id
    return out.turn(place, where, mid, KEPT_ROLES[role], text, message.create_time)


# --- Claude -------------------------------------------------------------------------------
def _claude(path: Path, user_id: str) -> ChatExport:
    out = _Turns(user_id)
    for n, raw in enumerate(_conversations(path)):
        place, where, data = _conversation(path, n, raw, ("uuid",))
        conv = _validate(ClaudeConversation, data, where)
        sid = out.session_id(conv.uuid, where, "its uuid")
        branch = _claude_branch(conv, where)
        out.skipped["other_branch"] += len(conv.chat_messages) - len(branch)
        turns = []
        for index, message in branch:
            turn = _claude_turn(out, place, where, f"{conv.uuid}#{index}", message)
            if turn is not None:
                turns.append(turn)
        out.session(sid, turns, conv.created_at)
    return out.export


def _claude_branch(conv: ClaudeConversation, where: str) -> list[tuple[int, ClaudeMessage]]:
    """(index, message) of the current branch, oldest first; every message, in order, where
    the conversation names no current leaf it holds (a flat conversation of older exports)."""
    rows = conv.chat_messages
    by_id: dict[str, int] = {}
    for index, message in enumerate(rows):
        if message.uuid is not None:
            by_id.setdefault(message.uuid, index)
    leaf = conv.current_leaf_message_uuid
    if leaf is None or leaf not in by_id:
        return list(enumerate(rows))
    chain: list[tuple[int, ClaudeMessage]] = []
    seen: set[str] = set()
    while leaf is not None and leaf in by_id:
        if leaf in seen:
            raise ChatExportError(
                f"{where}: chat_messages: the parent_message_uuid chain loops at {_show(leaf)}"
            )
        seen.add(leaf)
        index = by_id[leaf]
        chain.append((index, rows[index]))
        leaf = rows[index].parent_message_uuid
    return chain[::-1]


def _claude_turn(
    out: _Turns, place: str, where: str, fallback_id: str, message: ClaudeMessage
) -> dict[str, Any] | None:
    role = message.sender
    if role not in KEPT_ROLES:
        out.skipped[f"role_{role}"[:64]] += 1
        return None
    text = message.text or ""
    if not text.strip():
        blocks = message.content or []
        text = "\n".join(b.text for b in blocks if isinstance(b.text, str))
    extra = []
    for att in message.attachments or []:
        content = att.extracted_content
        if content is not None and content.strip():
            name = att.file_name if isinstance(att.file_name, str) else "file"
            extra.append(f"[attached {name}]\n{content.strip()}")
        else:
            out.skipped["attachment_absent"] += 1
    out.skipped["attachment_absent"] += len(message.files or [])
    text = "\n\n".join(t for t in [text.strip(), *extra] if t)
    if _blank(text):
        out.skipped["empty"] += 1
        return None
    mid = message.uuid or fallback_id
    return out.turn(place, where, mid, KEPT_ROLES[role], text, message.created_at)


# --- JSON Lines ---------------------------------------------------------------------------
def _jsonl(path: Path, user_id: str) -> ChatExport:
    out = _Turns(user_id)
    sessions: dict[str, list[dict[str, Any]]] = {}
    lines: Counter[str] = Counter()  # lines read per session: the ids of lines without one
    # Lines end at "\n" only: str.splitlines would also cut at U+2028 and other characters
    # that JSON strings may hold unescaped.
    for n, raw in enumerate(_text_of(path).split("\n"), 1):
        if not raw.strip():
            continue
        place = f"line {n}"
        where = f"{path}, {place}"
        data = _loads(raw, where)
        if not isinstance(data, dict):
            raise ChatExportError(f"{where}: a message must be a JSON object")
        row = _validate(JsonlMessage, data, where)
        if row.user_id is not None and row.user_id != user_id:
            raise ChatExportError(f"{where}: user_id {_show(row.user_id)} is not {user_id!r}")
        text = row.text if row.text is not None else row.content
        if text is None:
            raise ChatExportError(f"{where}: needs a string text (or content)")
        name = "session_id" if row.session_id else "conversation_id"
        session = out.session_id(row.session_id or row.conversation_id or "default", where, name)
        lines[session] += 1
        if _blank(text):
            out.skipped["empty"] += 1
            continue
        role = row.speaker if row.speaker is not None else row.role
        if role == "system":
            out.skipped["role_system"] += 1
            continue
        speaker = role if role is not None and not _blank(role) else JSONL_DEFAULT_SPEAKER
        mid = row.id or f"{session}#{lines[session]}"
        turn = out.turn(place, where, mid, speaker, text, row.timestamp)
        if turn is not None:
            sessions.setdefault(session, []).append(turn)
    for sid, turns in sessions.items():
        out.session(sid, turns, None)
    return out.export


__all__ = ["FORMATS", "MAX_EXPORT_BYTES", "ChatExport", "read_chat_export"]
