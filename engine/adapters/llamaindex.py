"""hymem as a LlamaIndex memory block (`pip install 'hymem[llamaindex]'`).

`llama_index.core.memory.Memory` keeps a short-term chat history and fills its system message
from memory blocks. `HymemMemoryBlock` is one: on every `get`, hymem's light path reads the
user's summaries for the latest user message (`Memory.context`: a few hundred tokens of the
most relevant facts, no model call) and the block renders them as lines; messages that leave the
short-term history (or every put, with `accept_short_term_memory`) are added to hymem as the
user's turns. It works with a `hymem.Memory` or `AsyncMemory` in the process, and with a
`hymem.client.Client` or `AsyncClient` talking to `hymem serve`.
"""

from __future__ import annotations

from typing import Any

from hymem.adapters.calls import call
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock
from pydantic import Field

_ROLES = {MessageRole.USER: "user", MessageRole.ASSISTANT: "assistant"}
CHARS_PER_TOKEN = 4  # truncation's estimate: drop whole lines, least relevant first


class HymemMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory from hymem for one user: relevant facts in, the conversation out."""

    name: str = Field(default="hymem", description="The block's name in the memory template.")
    memory: Any = Field(description="a hymem Memory, AsyncMemory, Client or AsyncClient")
    user_id: str = Field(description="whose memory this is")
    session_id: str = Field(default="default", description="hymem session of the turns added")
    agent_id: str | None = Field(default=None, description="hymem agent scope, if any")
    depth: str = Field(default="light", description='context depth: "light" or "auto"')

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        question = next(
            (
                m.content
                for m in reversed(messages or [])
                if m.role == MessageRole.USER and isinstance(m.content, str) and m.content.strip()
            ),
            None,
        )
        if question is None:
            return ""
        hits = await call(
            self.memory.context,
            question,
            user_id=self.user_id,
            depth=self.depth,
            agent_id=self.agent_id,
        )
        return "\n".join(f"- {hit.text}" for hit in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns = [
            {"role": _ROLES[m.role], "content": m.content}
            for m in messages
            if m.role in _ROLES and isinstance(m.content, str) and m.content.strip()
        ]
        if turns:
            await call(
                self.memory.add,
                turns,
                user_id=self.user_id,
                session_id=self.session_id,
                agent_id=self.agent_id,
            )

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the last (least relevant) lines until about `tokens_to_truncate` are gone."""
        lines = content.splitlines()
        budget = tokens_to_truncate * CHARS_PER_TOKEN
        while lines and budget > 0:
            budget -= len(lines.pop()) + 1
        return "\n".join(lines) or None


__all__ = ["HymemMemoryBlock"]
