"""`hf:MODEL_OR_PATH` -- a local transformers chat model.

The tokenizer's chat template renders the messages, decoding is greedy, and token counts come
from the tokenizer itself. The model loads lazily on the first call (opening a Memory stays
cheap) and one lock serialises loading and generation: a single local model gains nothing from
concurrent `generate` calls and is not documented as safe under them. There is no JSON mode:
replies go through the same extract/validate/repair path as any other backend. `max_time`
bounds generation so a call respects its deadline; offline loading is forced
(`local_files_only`) so a missing model is a clear ConfigError, never a download.
"""

from __future__ import annotations

import threading
from typing import Any

from hymem.core.errors import ConfigError, LLMUnavailable
from hymem.core.logging import get_logger
from hymem.llm.backend import Completion, Message

log = get_logger("hymem.llm.hf")


class HFBackend:
    """Greedy generation with a local causal LM; thread-safe via one lock."""

    def __init__(self, model_path: str, *, device: str | None = None) -> None:
        self.model = model_path
        self.label = f"hf:{model_path}"
        self.device = device
        self._lock = threading.Lock()
        self._tokenizer: Any = None
        self._lm: Any = None

    def _load(self) -> tuple[Any, Any]:
        if self._lm is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            try:
                tokenizer = AutoTokenizer.from_pretrained(self.model, local_files_only=True)
                # Any: transformers wraps `.to` with functools.wraps, which typeshed types as an
                # unbound _Wrapped that expects the model as its first argument.
                lm: Any = AutoModelForCausalLM.from_pretrained(self.model, local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"cannot load local model {self.model!r}: {exc}") from exc
            if getattr(tokenizer, "chat_template", None) is None:
                raise ConfigError(f"model {self.model!r} has no chat template")
            if self.device:
                lm = lm.to(self.device)
            lm.eval()
            self._tokenizer, self._lm = tokenizer, lm
            log.info("llm.hf.loaded", model=self.model)
        return self._tokenizer, self._lm

    def count_tokens(self, text: str) -> int:
        """Tokens as this model's own tokenizer counts them."""
        with self._lock:
            tokenizer, _ = self._load()
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

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
        import torch

        with self._lock:
            tokenizer, lm = self._load()
            prompt = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            enc = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
            enc = {k: v.to(lm.device) for k, v in enc.items()}
            pad_id = tokenizer.pad_token_id
            if pad_id is None:
                pad_id = tokenizer.eos_token_id
            try:
                with torch.inference_mode():
                    out = lm.generate(
                        **enc,
                        do_sample=False,  # greedy: reproducible
                        max_new_tokens=max_tokens,
                        max_time=timeout_s,
                        pad_token_id=pad_id,
                    )
            except (RuntimeError, ValueError) as exc:
                raise LLMUnavailable(f"local generation failed: {exc}", role=role) from exc
            prompt_len = int(enc["input_ids"].shape[1])
            new_ids = out[0][prompt_len:]
            text = tokenizer.decode(new_ids, skip_special_tokens=True)
            generated = int(new_ids.shape[0])
            eos = tokenizer.eos_token_id
            ended = generated > 0 and eos is not None and int(new_ids[-1]) == eos
        return Completion(
            text=text,
            model=self.model,
            prompt_tokens=prompt_len,
            completion_tokens=generated,
            # all max_new_tokens used and no end token: cut off, as a server's "length"
            finish_reason="length" if generated >= max_tokens and not ended else "stop",
        )

    def close(self) -> None:
        with self._lock:
            self._lm = None
            self._tokenizer = None
