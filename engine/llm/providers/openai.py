"""`openai:MODEL` -- any OpenAI-compatible chat-completions server through the `openai` client.

Provider (who: key, base URL, client) is kept apart from the adapter (how: one request, its
reply and its errors). The client's own retries are off (`max_retries=0`): tenacity in
`retry.py` is the one place retries happen. JSON mode (`response_format={"type":
"json_object"}`) is requested first; a server that rejects it with a 400/422 mentioning it is
asked again in plain text, and remembered, so vLLM, Ollama, llama.cpp or LM Studio all work.
"""

from __future__ import annotations

import email.utils
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import openai
from hymem.core.config import MemoryConfig
from hymem.core.errors import (
    ConfigError,
    LLMAuthError,
    LLMContextOverflowError,
    LLMRequestError,
)
from hymem.core.logging import get_logger
from hymem.llm.backend import Completion, Message, TransientLLMError
from openai.types.chat import ChatCompletionMessageParam

log = get_logger("hymem.llm.openai")

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})


def _chat_messages(messages: list[Message]) -> list[ChatCompletionMessageParam]:
    """hymem's {"role", "content"} messages as the client's typed message params."""
    out: list[ChatCompletionMessageParam] = []
    for message in messages:
        role, content = message["role"], message["content"]
        if role == "system":
            out.append({"role": "system", "content": content})
        elif role == "user":
            out.append({"role": "user", "content": content})
        elif role == "assistant":
            out.append({"role": "assistant", "content": content})
        else:
            raise ValueError(f"unknown chat role {role!r}")
    return out


@dataclass(frozen=True)
class OpenAIProvider:
    """Where requests go and with which key: config first, then OPENAI_BASE_URL/OPENAI_API_KEY."""

    base_url: str | None
    api_key: str = field(repr=False)  # never in logs or tracebacks

    @classmethod
    def resolve(cls, base_url: str | None = None, api_key: str | None = None) -> OpenAIProvider:
        url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if url is None:
                raise ConfigError(
                    "openai backend needs an API key: set llm_api_key or OPENAI_API_KEY"
                )
            key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) ignore the key
        return cls(base_url=url, api_key=key)

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0)


def _retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` / `retry-after` (delta seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text[:2000]
    except (AttributeError, UnicodeDecodeError):
        return str(exc.body)[:2000]


class OpenAIBackend:
    """One chat-completions attempt per `complete` call, errors mapped into hymem's tree."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: OpenAIProvider | None = None,
    ) -> None:
        self.model = model
        self.label = f"openai:{model}"
        self.provider = provider or OpenAIProvider.resolve(base_url, api_key)
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self._json_mode_ok = True

    @classmethod
    def from_config(cls, config: MemoryConfig) -> OpenAIBackend:
        key = config.llm_api_key.get_secret_value() if config.llm_api_key else None
        return cls(config.llm.split(":", 1)[1], base_url=config.llm_base_url, api_key=key)

    @property
    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                self._client = self.provider.client()
            return self._client

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
        # `json_schema` is not sent: OpenAI-compatible servers disagree on schema-constrained
        # output (and on the errors for it); the reply is validated and repaired as ever.
        use_json = json_mode and self._json_mode_ok
        try:
            return self._request(messages, role, use_json, max_tokens, temperature, timeout_s)
        except LLMRequestError as exc:
            if not (use_json and _rejects_json_mode(exc)):
                raise
            log.warning("llm.json_mode_unsupported", model=self.model, error=str(exc))
            self._json_mode_ok = False
            return self._request(messages, role, False, max_tokens, temperature, timeout_s)

    def _request(
        self,
        messages: list[Message],
        role: str,
        json_mode: bool,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        extra: dict[str, Any] = {}
        if json_mode:
            extra["response_format"] = {"type": "json_object"}
        try:
            resp = self.client.chat.completions.create(
                model=self.model,
                messages=_chat_messages(messages),
                max_tokens=max_tokens,
                temperature=temperature,
                timeout=timeout_s,
                extra_headers={"X-Hymem-Role": role},
                **extra,
            )
        except openai.APITimeoutError as exc:
            raise TransientLLMError(f"timed out after {timeout_s:.1f}s", role=role) from exc
        except openai.APIConnectionError as exc:
            raise TransientLLMError(f"connection error: {exc}", role=role) from exc
        except openai.APIStatusError as exc:
            raise _map_status(exc, role) from exc
        except openai.APIResponseValidationError as exc:
            raise TransientLLMError(f"unreadable response: {exc}", role=role) from exc
        if not resp.choices:
            raise TransientLLMError("response had no choices", role=role)
        choice = resp.choices[0]
        text = choice.message.content or ""
        usage = resp.usage
        return Completion(
            text=text,
            model=resp.model or self.model,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
            finish_reason=choice.finish_reason,
        )

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


# How servers say a prompt does not fit the context window: llama.cpp's server (400, some
# builds 500, type exceed_context_size_error), OpenAI and vLLM ("maximum context length",
# code context_length_exceeded), llama-cpp-python ("exceed context window"), and others.
_CONTEXT_OVERFLOW_HINTS = (
    "exceed_context_size_error",
    "exceeds the available context size",
    "context_length_exceeded",
    "maximum context length",
    "exceed context window",
    "exceeds the context length",
    "exceeds the context window",
    "too many tokens",
    "prompt is too long",
)
_OVERFLOW_STATUS = frozenset({400, 413, 422, 500})


def _is_context_overflow(status: int, body: str) -> bool:
    """A rejection because the prompt (plus the reply budget) exceeds the model's context: a
    400/413/422 or a 500 (older llama.cpp servers) whose body says so."""
    text = body.lower()
    return status in _OVERFLOW_STATUS and any(hint in text for hint in _CONTEXT_OVERFLOW_HINTS)


def _map_status(exc: openai.APIStatusError, role: str) -> Exception:
    status = exc.status_code
    body = _body_text(exc)
    msg = f"HTTP {status}: {body[:300]}"
    if _is_context_overflow(status, body):
        return LLMContextOverflowError(
            f"the prompt does not fit the model's context window: {msg}",
            role=role,
            status_code=status,
            body=body,
        )
    if status in (401, 403):
        return LLMAuthError(msg, role=role, status_code=status, body=body)
    if status >= 500 or status in _TRANSIENT_STATUS:
        return TransientLLMError(
            msg,
            role=role,
            status_code=status,
            body=body,
            retry_after=_retry_after(exc.response.headers),
        )
    return LLMRequestError(msg, role=role, status_code=status, body=body)


def _rejects_json_mode(exc: LLMRequestError) -> bool:
    body = (exc.body or "").lower()
    hints = ("response_format", "json_object", "json mode", "json_mode")
    return exc.status_code in (400, 422) and any(h in body for h in hints)
