"""hymem in the OpenAI Agents SDK (`pip install 'hymem[openai-agents]'`).

* `HymemSession` implements the SDK's `Session` protocol. A session's history is what the
  runner replays to the model, item for item (messages, tool calls and their outputs,
  reasoning), so the exact items live in a replay session, by default the SDK's own
  `SQLiteSession` (a file, or memory); every user and assistant message also goes into hymem as
  the user's turns (the session id as hymem's session), where it becomes long-term memory that
  later sessions can search. A session belongs to its user first: the default replay keys its
  history by user and session id together (`replay_key`), so two users who pick the same
  session id in one replay file never see, pop or clear each other's items. Each `add_items`
  is one hymem request (`request_id`): an exchange said twice is stored twice, and the same
  items written again after a failed write are stored once. `pop_item` and `clear_session`
  act on the replay history only: what the user said stays in long-term memory (remove it
  with `Memory.delete`, or `erase_user`).
* `memory_tools` gives an agent `search_memory`, `ask_memory` and `add_memory` as SDK function
  tools over one user's memory.

Both take a `Memory`, `AsyncMemory`, `hymem.client.Client` or `AsyncClient`.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from agents import FunctionTool, SQLiteSession, function_tool
from agents.memory import Session, SessionSettings
from hymem.adapters.calls import call
from hymem.core.validation import check_session_id, check_user_id

NOTES_SESSION = "agent-notes"  # the hymem session of what `add_memory` remembers


def message_turns(items: list[Any]) -> list[dict[str, Any]]:
    """The user and assistant messages among Responses API input items, as hymem messages;
    tool calls, tool outputs and reasoning are not conversation and are left out."""
    turns: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            continue
        if item.get("type", "message") != "message":
            continue
        content = item.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "\n".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        else:
            continue
        if text.strip():
            # No item id as turn id: the chat-completions path gives every item the same
            # placeholder id; `HymemSession.add_items` names the whole call instead.
            turns.append({"role": item["role"], "content": text})
    return turns


def _batch_key(items: list[Any]) -> str:
    """What one `add_items` call wrote, to know the same items sent again."""
    text = json.dumps(items, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def replay_key(user_id: str, session_id: str) -> str:
    """The replay history's key for one user's session: the user first, then the session id,
    as a JSON pair (unambiguous whatever either holds), because a replay file is shared by
    every user whose sessions it keeps and a session id alone names no owner."""
    return json.dumps([user_id, session_id], ensure_ascii=False)


class HymemSession:
    """A `Session` whose messages also become `user_id`'s long-term memory in hymem."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        memory: Any,
        *,
        user_id: str,
        session_id: str,
        replay: Session | None = None,
        db_path: str | Path = ":memory:",
    ) -> None:
        """`replay` keeps the exact items (default: a `SQLiteSession` in `db_path` keyed by
        `replay_key(user_id, session_id)`); a replay passed in is used as given, so it must
        be this user's own."""
        self.memory = memory
        self.user_id = check_user_id(user_id)
        self.session_id = check_session_id(session_id)
        if replay is None:
            replay = SQLiteSession(replay_key(user_id, session_id), db_path)
        self.replay = replay
        self._unsettled: tuple[str, str] | None = None  # the last failed write: items, id

    def _request_for(self, items: list[Any]) -> str:
        """The request id of a write of `items`: the failed write's when these are its items
        again, else a new one."""
        if self._unsettled is not None and self._unsettled[0] == _batch_key(items):
            return self._unsettled[1]
        return uuid.uuid4().hex

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return list(await self.replay.get_items(limit))

    async def add_items(self, items: list[Any]) -> None:
        """hymem first, then the replay, each call under its own request id: a call that
        failed at either step and is made again with the same items (by the runner resuming
        its pending write, or by the application) reuses the failed call's id, so hymem
        stores its messages once; any other call is new, so an exchange said twice is two.
        In the other order a failure after the replay's append would leave the runner seeing
        the items saved and never sending them to hymem again."""
        turns = message_turns(items)
        request_id = self._request_for(items)
        try:
            if turns:
                await call(
                    self.memory.add,
                    turns,
                    user_id=self.user_id,
                    session_id=self.session_id,
                    request_id=request_id,
                )
            await self.replay.add_items(items)
        except BaseException:
            self._unsettled = (_batch_key(items), request_id)
            raise
        self._unsettled = None

    async def pop_item(self) -> Any | None:
        return await self.replay.pop_item()

    async def clear_session(self) -> None:
        await self.replay.clear_session()


def memory_tools(memory: Any, *, user_id: str, k: int = 5) -> list[FunctionTool]:
    """`search_memory`, `ask_memory` and `add_memory` over `user_id`'s memory."""

    @function_tool
    async def search_memory(query: str) -> str:
        """Search what is known about the user from earlier conversations.

        Args:
            query: what to look for, in a few words.
        """
        hits = await call(memory.search, query, user_id=user_id, k=k)
        return "\n".join(f"- {hit.text}" for hit in hits) or "(nothing found)"

    @function_tool
    async def ask_memory(question: str) -> str:
        """Answer a question about the user from their long-term memory.

        Args:
            question: the question, as the user would ask it.
        """
        answer = await call(memory.ask, question, user_id=user_id)
        return str(answer.text)

    @function_tool
    async def add_memory(fact: str) -> str:
        """Remember a fact about the user for later conversations.

        Args:
            fact: the fact, in one sentence.
        """
        await call(
            memory.add,
            [{"role": "user", "content": fact}],
            user_id=user_id,
            session_id=NOTES_SESSION,
        )
        await call(memory.flush, user_id=user_id)
        return "remembered"

    return [search_memory, ask_memory, add_memory]


__all__ = ["NOTES_SESSION", "HymemSession", "memory_tools", "message_turns", "replay_key"]
