"""`gguf:/path/model.gguf` and `local` -- a GGUF model run in-process by llama.cpp.

What makes it more than a wrapper:

* Output is constrained to the call's JSON schema (`hymem.llm.reply_schema`) by a llama.cpp
  grammar, so a small model's reply always parses and can only name the ids it was shown.
* The model's own chat template (from its GGUF metadata) renders the messages; a file without
  one is a base model and is refused (`gguf_models.check_chat_model`).
* One model per file per process, shared by every Memory and thread that names it: loaded once,
  on the first call (opening a Memory stays cheap), freed when the last user closes. Its calls
  are queued on one slot (`slots`), which PromptedRoles waits on outside the call's own time.
* Generation is bounded by the token budget and by the deadline (checked every token, as a
  stopping criterion); a prompt over the context window is `LLMContextOverflowError`, as from
  a server. The messages are rendered exactly as llama.cpp's own chat handler renders them.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hymem.core.errors import (
    ConfigError,
    LLMContextOverflowError,
    LLMRequestError,
    LLMUnavailable,
)
from hymem.core.logging import get_logger
from hymem.llm.backend import Completion, Message, TransientLLMError
from hymem.llm.providers.gguf_models import (
    PackagedModel,
    check_chat_model,
    check_packaged,
    check_pin,
    resolve_spec,
)

log = get_logger("hymem.llm.llamacpp")

DEFAULT_CONTEXT_TOKENS = 8192
# Greedy decoding of a small model loops on a phrase; a mild penalty on repeated tokens breaks
# most loops (the grammar still decides which tokens may come). 1.0 turns it off.
DEFAULT_REPEAT_PENALTY = 1.1


@dataclass(frozen=True)
class _ChatPrompt:
    """Messages rendered with the model's own template, as tokens, with its stop markers."""

    tokens: list[int]
    stop: list[str]
    criteria: list[Any]


@dataclass
class _Shared:
    """One loaded model and what guards it, shared by every backend naming the same file."""

    path: Path
    threads: int | None
    context_tokens: int
    packaged: PackagedModel | None
    slots: threading.BoundedSemaphore = field(default_factory=lambda: threading.BoundedSemaphore(1))
    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0
    llama: Any = None
    name: str = ""
    formatter: Any = None

    def chat_prompt(self, messages: list[Message]) -> _ChatPrompt:
        """`messages` rendered as llama.cpp's own chat handler renders them (the template from
        the GGUF metadata), kept apart so generation can take hymem's stopping criteria."""
        result = self.formatter(messages=messages)
        tokens = self.llama.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )
        stop = result.stop if isinstance(result.stop, list) else [result.stop]
        return _ChatPrompt(
            tokens=tokens,
            stop=[s for s in stop if s],
            criteria=list(result.stopping_criteria or []),
        )

    def load(self) -> Any:
        """The model, loaded on first use (under `lock`)."""
        if self.llama is not None:
            return self.llama
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ConfigError('a GGUF model needs llama.cpp: pip install "hymem[local]"') from exc
        check_pin(self.path, self.packaged.sha256 if self.packaged else None)
        started = time.perf_counter()
        try:
            llama = Llama(
                model_path=str(self.path),
                n_ctx=self.context_tokens,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ConfigError(f"cannot load GGUF model {str(self.path)!r}: {exc}") from exc
        metadata = dict(llama.metadata or {})
        try:
            self.name = check_chat_model(self.path, metadata)
            if self.packaged is not None:
                check_packaged(self.path, metadata, self.packaged)
        except ConfigError:
            llama.close()
            raise
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        eos, bos = llama.token_eos(), llama.token_bos()
        self.formatter = Jinja2ChatFormatter(
            template=metadata["tokenizer.chat_template"],
            eos_token=_token_text(llama, eos),
            bos_token=_token_text(llama, bos),
            stop_token_ids=[eos],
        )
        self.llama = llama
        log.info(
            "llm.llamacpp.loaded",
            model=self.name,
            path=str(self.path),
            context_tokens=self.context_tokens,
            threads=self.threads,
            load_s=round(time.perf_counter() - started, 2),
        )
        return llama


def _token_text(llama: Any, token: int) -> str:
    if token < 0:
        return ""
    return bytes(llama.detokenize([token], special=True)).decode("utf-8", errors="replace")


_MODELS: dict[tuple[str, int | None, int], _Shared] = {}
_MODELS_LOCK = threading.Lock()


def _acquire(
    path: Path, threads: int | None, context_tokens: int, packaged: PackagedModel | None
) -> _Shared:
    key = (str(path.resolve()), threads, context_tokens)
    with _MODELS_LOCK:
        shared = _MODELS.get(key)
        if shared is None:
            shared = _MODELS[key] = _Shared(path, threads, context_tokens, packaged)
        shared.users += 1
        return shared


def _release(shared: _Shared) -> None:
    with _MODELS_LOCK:
        shared.users -= 1
        if shared.users > 0:
            return
        for key in [k for k, v in _MODELS.items() if v is shared]:
            del _MODELS[key]
    with shared.lock:
        if shared.llama is not None:
            shared.llama.close()
            shared.llama = None


class LlamaCppBackend:
    """A GGUF chat model in this process; thread-safe, one call at a time per model."""

    constrained = True

    def __init__(
        self,
        spec: str,
        *,
        threads: int | None = None,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        repeat_penalty: float = DEFAULT_REPEAT_PENALTY,
    ) -> None:
        path, packaged = resolve_spec(spec)
        self.label = "local" if spec == "local" else f"gguf:{path}"
        self.model = path.stem
        self._shared: _Shared | None = _acquire(path, threads, context_tokens, packaged)
        self.slots = self._shared.slots
        self.repeat_penalty = repeat_penalty

    def _model(self) -> tuple[_Shared, Any]:
        shared = self._shared
        if shared is None:
            raise LLMUnavailable(f"{self.label} is closed")
        return shared, shared.load()

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
        from llama_cpp import StoppingCriteriaList

        deadline = time.monotonic() + timeout_s
        timed_out = False

        def past_deadline(_ids: Any, _logits: Any) -> bool:
            nonlocal timed_out
            timed_out = timed_out or time.monotonic() > deadline
            return timed_out

        shared = self._shared
        if shared is None:
            raise LLMUnavailable(f"{self.label} is closed", role=role)
        with shared.lock:
            llama = shared.load()
            grammar = _grammar(json_schema, role) if json_mode else None
            try:
                chat = shared.chat_prompt(messages)  # a template may raise on odd messages
                resp = llama.create_completion(
                    prompt=chat.tokens,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    # under a grammar the reply ends where the JSON does; a stop string would
                    # cut a reply whose text happens to contain it (e.g. "<|im_end|>")
                    stop=chat.stop if grammar is None else [],
                    stopping_criteria=StoppingCriteriaList([*chat.criteria, past_deadline]),
                    grammar=grammar,
                    repeat_penalty=self.repeat_penalty,
                    seed=0,
                )
            except ValueError as exc:
                if "exceed context window" in str(exc):
                    raise LLMContextOverflowError(
                        f"the prompt does not fit the model's context: {exc}", role=role
                    ) from exc
                raise LLMRequestError(f"llama.cpp refused the request: {exc}", role=role) from exc
            except RuntimeError as exc:
                raise LLMUnavailable(f"llama.cpp failed: {exc}", role=role) from exc
        if timed_out:
            raise TransientLLMError(f"timed out after {timeout_s:.1f}s", role=role)
        choice = resp["choices"][0]
        usage = resp.get("usage") or {}
        return Completion(
            text=choice.get("text") or "",
            model=shared.name or self.model,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
        )

    def count_tokens(self, text: str) -> int:
        """Tokens as this model's own tokenizer counts them."""
        shared, llama = self._model()
        with shared.lock:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def close(self) -> None:
        shared, self._shared = self._shared, None
        if shared is not None:
            _release(shared)


# llama-cpp-python's schema converter lets a JSON string hold raw control characters
# (`char ::= [^"\\]`): a small model then writes a newline inside a string and wanders off into
# markup, and the reply is no JSON at all. JSON forbids them; so does the grammar hymem sends.
_LOOSE_CHAR = r'char ::= [^"\\]'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F]'


def grammar_text(json_schema: dict[str, Any] | None) -> str:
    """The GBNF grammar for `json_schema` (any JSON value when None), strings as JSON has them."""
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    if json_schema is None:
        return JSON_GBNF
    grammar: str = json_schema_to_gbnf(json.dumps(json_schema))  # unannotated upstream
    return grammar.replace(_LOOSE_CHAR, _JSON_CHAR)


def _grammar(json_schema: dict[str, Any] | None, role: str) -> Any:
    """The llama.cpp grammar for `json_schema`. A schema the converter cannot express is
    hymem's bug, surfaced as such, never silently unconstrained."""
    from llama_cpp.llama_grammar import LlamaGrammar

    try:
        return LlamaGrammar.from_string(grammar_text(json_schema), verbose=False)
    except (ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise LLMRequestError(f"no grammar for the reply schema: {exc}", role=role) from exc


__all__ = ["DEFAULT_CONTEXT_TOKENS", "DEFAULT_REPEAT_PENALTY", "LlamaCppBackend", "grammar_text"]
