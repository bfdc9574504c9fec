"""The one interface every chat model sits behind.

A backend performs exactly one attempt per `complete` call and translates its own failures into
hymem's error tree: transient ones (rate limits, 5xx, timeouts, connection errors) as
`TransientLLMError`, credentials as `LLMAuthError`, other rejected requests as
`LLMRequestError`. Retries, deadlines, caching, accounting and validation all live above it
(in `retry.py` and `prompted.py`), so a new provider only has to speak its wire format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from hymem.core.errors import LLMUnavailable

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


@dataclass(frozen=True)
class Completion:
    """One model reply; token counts are None when the backend did not report them.

    `finish_reason` is the server's word for why generation stopped ("stop", "length", ...;
    None when it gave none): "length" means the reply was cut off at its token budget, so its
    text is a fragment, not an answer to validate or show back to the model."""

    text: str
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """The reply stopped at its token budget, not where the model ended it."""
        return self.finish_reason == "length"


class TransientLLMError(LLMUnavailable):
    """One attempt failed in a way a retry may fix; `retry_after` is the server's hint (s)."""

    def __init__(
        self,
        message: str,
        *,
        role: str | None = None,
        status_code: int | None = None,
        body: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, role=role, status_code=status_code, body=body)
        self.retry_after = retry_after


class ChatBackend(Protocol):
    """A chat model: `label` names it on results ("openai:gpt-4.1-mini", "hf:/path").

    A backend may also carry `slots`, a semaphore bounding its requests in flight for the
    whole process (one local model answers one request at a time, whoever asks), and
    `constrained = True` when `json_schema` shapes its output (the schema is then part of
    what a cached reply is keyed on)."""

    label: str
    model: str

    def complete(
        self,
        messages: list[Message],
        *,
        role: str,
        json_mode: bool,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One attempt, finished or failed within `timeout_s` seconds. `json_schema` is the
        schema the reply must match (`hymem.llm.reply_schema`): a backend that can constrain
        decoding to it does; one that cannot ignores it and asks for JSON as `json_mode` says."""
        ...

    def close(self) -> None: ...
