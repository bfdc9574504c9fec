"""Chat exports read into one user's history: ChatGPT, Claude and plain JSON Lines.

Each conversation becomes a session (`session_id` = the conversation's id) and each kept message
a turn whose id is the export's own message id, so importing the same export twice stores
nothing twice. What is not a turn is counted, never dropped silently (`ChatExport.skipped`):

* ChatGPT (`conversations.json` from a data export): each conversation's `mapping` is a tree of
  message nodes; only the branch the user ended on is read, from `current_node` back to the
  root (an edited prompt leaves its old branch beside it: "other_branch"). System and tool
  messages, hidden ones (weight 0, or marked hidden from the conversation) and messages with no
  text are skipped. An image or file the message points to is not in the file: its text is
  kept, and the pointer counted ("attachment_absent").
* Claude (`conversations.json`): each conversation's `chat_messages`; where messages name a
  parent and the conversation its `current_leaf_message_uuid`, only that branch is read.
  `text`, else the text blocks of `content`; an attachment's `extracted_content` is appended to
  its message; a file named without its content is counted ("attachment_absent").
* JSON Lines: one message per line with `text` (or `content`), optional `id`, `speaker` (or
  `role`), `timestamp` and `session_id` (or `conversation_id`); a `user_id`, where given,
  must be the importing user's.

A file that is not UTF-8 or not the format's shape is a `UserInputError` naming where, before
anything is stored.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hymem.backfill.histories import Session, UserHistory
from hymem.core.errors import UserInputError

FORMATS = ("chatgpt", "claude", "jsonl")
KEPT_ROLES = {"user": "user", "human": "user", "assistant": "assistant"}


@dataclass
class ChatExport:
    history: UserHistory
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> messages (or pointers)

    @property
    def messages(self) -> int:
        return self.history.turn_count


def read_chat_export(path: Path, fmt: str, user_id: str) -> ChatExport:
    """The export at `path` in format `fmt` ("chatgpt", "claude" or "jsonl") as `user_id`'s."""
    readers: dict[str, Callable[[Path, str], ChatExport]] = {
        "chatgpt": _chatgpt,
        "claude": _claude,
        "jsonl": _jsonl,
    }
    if fmt not in readers:
        raise UserInputError(f"unknown chat export format {fmt!r}: use one of {', '.join(FORMATS)}")
    return readers[fmt](path, user_id)


def _text_of(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserInputError(
            f"{path}: not UTF-8 (byte {exc.start}: {exc.reason}); exports are UTF-8 JSON"
        ) from None
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _conversations(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(_text_of(path))
    except ValueError as exc:
        raise UserInputError(f"{path}: not JSON ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list) or not all(isinstance(c, dict) for c in data):
        raise UserInputError(f"{path}: expected a JSON list of conversations")
    return data


def _when(value: Any) -> str | None:
    """An export's timestamp (epoch seconds or ISO 8601) as naive-UTC ISO text, or None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).replace(tzinfo=None).isoformat()
    if isinstance(value, str) and value.strip():
        return value
    return None


def _turn(mid: str, role: str, text: str, when: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"id": mid, "speaker": role, "text": text}
    stamp = _when(when)
    if stamp is not None:
        message["timestamp"] = stamp
    return message


# --- ChatGPT ------------------------------------------------------------------------------
def _chatgpt(path: Path, user_id: str) -> ChatExport:
    export = ChatExport(UserHistory(user_id))
    for n, conv in enumerate(_conversations(path)):
        mapping = conv.get("mapping")
        cid = conv.get("conversation_id") or conv.get("id")
        if not isinstance(mapping, dict) or not isinstance(cid, str) or not cid:
            raise UserInputError(f"{path}: conversation {n} has no id or no message mapping")
        branch = _chatgpt_branch(mapping, conv.get("current_node"), f"{path}: conversation {cid}")
        export.skipped["other_branch"] += sum(
            1 for node in mapping.values() if isinstance(node, dict) and node.get("message")
        ) - len(branch)
        messages = []
        for node in branch:
            turn = _chatgpt_turn(node["message"], export.skipped)
            if turn is not None:
                messages.append(turn)
        if messages:
            export.history.sessions.append(Session(cid, messages, _when(conv.get("create_time"))))
    return export


def _chatgpt_branch(mapping: dict[str, Any], leaf: Any, where: str) -> list[dict[str, Any]]:
    """The message nodes from the root to `leaf` (the current node), oldest first; without a
    current node, the branch that follows each node's last child (the latest edit)."""
    if not isinstance(leaf, str) or leaf not in mapping:
        roots = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("parent")]
        leaf = roots[0] if roots else None
        while leaf is not None and mapping[leaf].get("children"):
            leaf = mapping[leaf]["children"][-1]
            if leaf not in mapping:
                raise UserInputError(f"{where}: a node names a child {leaf!r} it does not hold")
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while leaf is not None:
        if leaf in seen or not isinstance(mapping.get(leaf), dict):
            raise UserInputError(f"{where}: the message tree loops or names a missing node")
        seen.add(leaf)
        node = mapping[leaf]
        if node.get("message"):
            path.append(node)
        leaf = node.get("parent")
    return path[::-1]


def _chatgpt_turn(message: dict[str, Any], skipped: Counter[str]) -> dict[str, Any] | None:
    role = (message.get("author") or {}).get("role")
    meta = message.get("metadata") or {}
    if role not in KEPT_ROLES:
        skipped[f"role_{role}"] += 1
        return None
    if message.get("weight") == 0 or meta.get("is_visually_hidden_from_conversation"):
        skipped["hidden"] += 1
        return None
    content = message.get("content") or {}
    texts = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            skipped["attachment_absent"] += 1
    if isinstance(content.get("text"), str):
        texts.append(content["text"])
    text = "\n".join(t for t in texts if t.strip()).strip()
    if not text:
        skipped["empty"] += 1
        return None
    return _turn(str(message.get("id")), KEPT_ROLES[role], text, message.get("create_time"))


# --- Claude -------------------------------------------------------------------------------
def _claude(path: Path, user_id: str) -> ChatExport:
    export = ChatExport(UserHistory(user_id))
    for n, conv in enumerate(_conversations(path)):
        cid = conv.get("uuid")
        messages = conv.get("chat_messages")
        if not isinstance(cid, str) or not cid or not isinstance(messages, list):
            raise UserInputError(f"{path}: conversation {n} has no uuid or no chat_messages")
        branch = _claude_branch(messages, conv.get("current_leaf_message_uuid"))
        export.skipped["other_branch"] += len(messages) - len(branch)
        turns = []
        for msg in branch:
            turn = _claude_turn(msg, export.skipped)
            if turn is not None:
                turns.append(turn)
        if turns:
            export.history.sessions.append(Session(cid, turns, _when(conv.get("created_at"))))
    return export


def _claude_branch(messages: list[Any], leaf: Any) -> list[dict[str, Any]]:
    rows = [m for m in messages if isinstance(m, dict)]
    by_id = {m.get("uuid"): m for m in rows}
    if not isinstance(leaf, str) or leaf not in by_id:
        return rows  # a flat conversation (older exports): every message, in order
    chain: list[dict[str, Any]] = []
    while isinstance(leaf, str) and leaf in by_id and len(chain) <= len(rows):
        chain.append(by_id[leaf])
        leaf = by_id[leaf].get("parent_message_uuid")
    return chain[::-1]


def _claude_turn(msg: dict[str, Any], skipped: Counter[str]) -> dict[str, Any] | None:
    role = msg.get("sender")
    if role not in KEPT_ROLES:
        skipped[f"role_{role}"] += 1
        return None
    raw = msg.get("text")
    text: str = raw if isinstance(raw, str) else ""
    if not text.strip():
        blocks = msg.get("content") or []
        text = "\n".join(
            b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    extra = []
    for att in msg.get("attachments") or []:
        content = att.get("extracted_content") if isinstance(att, dict) else None
        if isinstance(content, str) and content.strip():
            extra.append(f"[attached {att.get('file_name', 'file')}]\n{content.strip()}")
        else:
            skipped["attachment_absent"] += 1
    skipped["attachment_absent"] += len(msg.get("files") or [])
    text = "\n\n".join(t for t in [text.strip(), *extra] if t)
    if not text:
        skipped["empty"] += 1
        return None
    return _turn(str(msg.get("uuid")), KEPT_ROLES[role], text, msg.get("created_at"))


# --- JSON Lines ---------------------------------------------------------------------------
def _jsonl(path: Path, user_id: str) -> ChatExport:
    export = ChatExport(UserHistory(user_id))
    sessions: dict[str, list[dict[str, Any]]] = {}
    for n, raw in enumerate(_text_of(path).splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path}, line {n}"
        try:
            row = json.loads(raw)
        except ValueError as exc:
            raise UserInputError(f"{where}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise UserInputError(f"{where}: a message must be a JSON object")
        if row.get("user_id") not in (None, user_id):
            raise UserInputError(f"{where}: user_id {row['user_id']!r} is not {user_id!r}")
        text = row.get("text", row.get("content"))
        if not isinstance(text, str):
            raise UserInputError(f"{where}: needs a string text (or content)")
        if not text.strip():
            export.skipped["empty"] += 1
            continue
        role = row.get("speaker", row.get("role"))
        if role == "system":
            export.skipped["role_system"] += 1
            continue
        session = str(row.get("session_id") or row.get("conversation_id") or "default")
        message: dict[str, Any] = {"text": text}
        if isinstance(role, str) and role:
            message["speaker"] = role
        for key in ("id", "timestamp"):
            if row.get(key) is not None:
                message[key] = row[key]
        sessions.setdefault(session, []).append(message)
    export.history.sessions.extend(Session(sid, msgs) for sid, msgs in sessions.items())
    return export


__all__ = ["FORMATS", "ChatExport", "read_chat_export"]
