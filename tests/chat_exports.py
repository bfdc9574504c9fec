"""Small chat exports in each format's documented shape, written by the tests that read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _node(mid: str, parent: str | None, children: list[str], message: Any) -> dict[str, Any]:
    return {"id": mid, "parent": parent, "children": children, "message": message}


def _msg(mid: str, role: str, parts: list[Any], t: float, **extra: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": t,
        "content": {"content_type": "text", "parts": parts},
        "status": "finished_successfully",
        "weight": 1.0,
        "metadata": {},
        **extra,
    }


def chatgpt_export(path: Path) -> Path:
    """Two conversations. The first: a system prompt, a hidden message, a prompt the user edited
    (its first version and that version's answer are another branch), an image pointer beside
    text, an empty assistant message. The second: a plain exchange without a current_node."""
    c1 = {
        "id": "conv-1",
        "conversation_id": "conv-1",
        "title": "Sourdough",
        "create_time": 1700000000.0,
        "current_node": "a2",
        "mapping": {
            "root": _node("root", None, ["sys"], None),
            "sys": _node("sys", "root", ["hid"], _msg("sys", "system", ["You are helpful."], 1.0)),
            "hid": _node(
                "hid", "sys", ["u1-old", "u1"], _msg("hid", "user", ["ctx"], 2.0, weight=0.0)
            ),
            "u1-old": _node(
                "u1-old", "hid", ["a1-old"], _msg("u1-old", "user", ["My starter is dead."], 3.0)
            ),
            "a1-old": _node(
                "a1-old", "u1-old", [], _msg("a1-old", "assistant", ["Sorry to hear."], 4.0)
            ),
            "u1": _node(
                "u1",
                "hid",
                ["a1"],
                _msg(
                    "u1",
                    "user",
                    [
                        "My sourdough starter is called Clint and lives in the fridge.",
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://x",
                        },
                    ],
                    5.0,
                ),
            ),
            "a1": _node("a1", "u1", ["u2"], _msg("a1", "assistant", ["Feed Clint weekly."], 6.0)),
            "u2": _node("u2", "a1", ["a2"], _msg("u2", "user", ["Thanks!"], 7.0)),
            "a2": _node("a2", "u2", [], _msg("a2", "assistant", [""], 8.0)),
        },
    }
    c2 = {
        "id": "conv-2",
        "title": "Trip",
        "create_time": 1700100000.0,
        "mapping": {
            "r": _node("r", None, ["m1"], None),
            "m1": _node("m1", "r", ["m2"], _msg("m1", "user", ["I fly to Oslo in May."], 9.0)),
            "m2": _node("m2", "m1", [], _msg("m2", "assistant", ["Pack a raincoat."], 10.0)),
        },
    }
    path.write_text(json.dumps([c1, c2]), encoding="utf-8")
    return path


def claude_export(path: Path) -> Path:
    """One branched conversation (a retried answer: the first try is another branch) with an
    attachment whose text came along and a file named without its content, plus one flat
    conversation from an older export with an empty message."""
    branched = {
        "uuid": "cc-1",
        "name": "Garden",
        "created_at": "2024-03-01T10:00:00Z",
        "current_leaf_message_uuid": "m3",
        "chat_messages": [
            {
                "uuid": "m1",
                "sender": "human",
                "text": "I grow tomatoes called Ruby on my balcony.",
                "created_at": "2024-03-01T10:00:00Z",
                "parent_message_uuid": "00000000-0000-4000-8000-000000000000",
                "attachments": [{"file_name": "plan.txt", "extracted_content": "Row 1: Ruby"}],
                "files": [{"file_name": "photo.jpg"}],
            },
            {
                "uuid": "m2-old",
                "sender": "assistant",
                "text": "An answer the user retried.",
                "created_at": "2024-03-01T10:00:05Z",
                "parent_message_uuid": "m1",
            },
            {
                "uuid": "m3",
                "sender": "assistant",
                "text": "",
                "content": [{"type": "text", "text": "Water Ruby every morning."}],
                "created_at": "2024-03-01T10:00:09Z",
                "parent_message_uuid": "m1",
            },
        ],
    }
    flat = {
        "uuid": "cc-2",
        "name": "Old",
        "created_at": "2023-01-01T09:00:00Z",
        "chat_messages": [
            {"uuid": "f1", "sender": "human", "text": "My cat Miso is twelve.", "created_at": None},
            {"uuid": "f2", "sender": "assistant", "text": "   ", "created_at": None},
        ],
    }
    path.write_text(json.dumps([branched, flat]), encoding="utf-8")
    return path


def jsonl_export(path: Path) -> Path:
    rows = [
        {"conversation_id": "j1", "id": "j1-1", "role": "user", "content": "I bake on Sundays."},
        {"conversation_id": "j1", "id": "j1-2", "role": "system", "content": "be brief"},
        {"conversation_id": "j1", "id": "j1-3", "role": "assistant", "content": ""},
        {"conversation_id": "j2", "id": "j2-1", "role": "user", "text": "My bike is blue."},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


# --- small builders for fault tests -------------------------------------------------------
def gpt_conversation(
    cid: str, texts: list[str], *, ids: bool = True, t: float = 1700000000.0
) -> dict[str, Any]:
    """One ChatGPT conversation: a root, then `texts` alternating user/assistant in a chain,
    the last one the current node; `ids=False` leaves the messages without their own id."""
    keys = [f"{cid}-n{i}" for i in range(len(texts))]
    mapping: dict[str, Any] = {f"{cid}-root": _node(f"{cid}-root", None, keys[:1], None)}
    for i, (key, text) in enumerate(zip(keys, texts, strict=True)):
        msg = _msg(key, "user" if i % 2 == 0 else "assistant", [text], t + i)
        if not ids:
            del msg["id"]
        parent = keys[i - 1] if i else f"{cid}-root"
        mapping[key] = _node(key, parent, keys[i + 1 : i + 2], msg)
    current = keys[-1] if keys else f"{cid}-root"
    return {"id": cid, "create_time": t, "current_node": current, "mapping": mapping}


def claude_conversation(cid: str, texts: list[str], *, ids: bool = True) -> dict[str, Any]:
    """One flat Claude conversation of `texts`, alternating human/assistant."""
    messages = []
    for i, text in enumerate(texts):
        msg: dict[str, Any] = {
            "sender": "human" if i % 2 == 0 else "assistant",
            "text": text,
            "created_at": f"2024-03-01T10:00:{i:02d}Z",
        }
        if ids:
            msg["uuid"] = f"{cid}-m{i}"
        messages.append(msg)
    return {"uuid": cid, "created_at": "2024-03-01T10:00:00Z", "chat_messages": messages}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path
