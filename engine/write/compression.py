"""Optional LLMLingua-2 pre-compression of the summariser's input, and the attention-based topic
boundaries the same model provides (LightMem §3.1, App. C.1).

Off unless `config.compressor_model` names a local model folder. Level-2 segments always keep
the raw text; only the lines handed to the summariser are compressed.

Offline construction. llmlingua 0.2.2's `PromptCompressor.__init__` calls
`tiktoken.encoding_for_model("gpt-3.5-turbo")`, which downloads `cl100k_base`. In the LLMLingua-2
path that encoding is only a token *counter*: it sizes the "origin/compressed tokens" report and
weights each word by its token count when choosing the keep threshold. tiktoken's plugin registry
cannot help (a second plugin defining `cl100k_base` is a duplicate-name error), so we construct
around it: `_OfflinePromptCompressor` is a subclass whose constructor does what the parent's does
(set the same attributes, then the public `load_model` and `init_llmlingua2`) except that the
counter is tiktoken's real `cl100k_base` when tiktoken can load it without the network (a cached
file under `TIKTOKEN_CACHE_DIR`), else the compressor model's own tokenizer. No llmlingua or
tiktoken internals are patched and no process-global state is touched.

llmlingua picks its word-merging rules from the model *name*, so the folder name must contain
`bert-base-multilingual-cased` or `xlm-roberta-large`; anything else is a ConfigError up front.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hymem.core.errors import ConfigError
from hymem.core.logging import get_logger
from hymem.write.segmentation import attention_peak_boundaries

log = get_logger("hymem.write.compression")

SUPPORTED_FAMILIES = ("bert-base-multilingual-cased", "xlm-roberta-large")
MAX_SEQ_TOKENS = 512  # LLMLingua-2's encoder window
SINK_TOKENS = 3  # App. C.1: mask the first and last three tokens against attention sinks
UPPER_LAYERS = 4  # App. C.1 uses layers 8-11 of 12: the top third
MIN_ATTENTION_TURNS = 3  # a turn's share of attention to its predecessor needs two predecessors


class _TokenizerCounter:
    """`.encode(text) -> ids`, all llmlingua needs from its `oai_tokenizer`."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def encode(self, text: str) -> list[int]:
        return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])


def _offline_counter(tokenizer: Any) -> Any:
    """tiktoken's cl100k_base if it loads without the network, else the model's tokenizer."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        import tiktoken

        try:
            return tiktoken.get_encoding("cl100k_base")
        except (OSError, ValueError) as exc:  # requests' errors subclass OSError
            log.info("compression.tiktoken_unavailable", reason=str(exc)[:200])
    return _TokenizerCounter(tokenizer)


def _build_prompt_compressor(model_path: str, device: str) -> Any:
    from llmlingua import PromptCompressor

    class _OfflinePromptCompressor(PromptCompressor):  # type: ignore[misc]  # llmlingua is untyped
        def __init__(self, model_name: str, device_map: str) -> None:
            # Mirrors PromptCompressor.__init__ (llmlingua 0.2.2) with use_llmlingua2=True,
            # minus the tiktoken download; see the module docstring.
            self.model_name = model_name
            self.use_llmlingua2 = True
            self.retrieval_model = None
            self.retrieval_model_name = None
            self.open_api_config: dict[str, Any] = {}
            self.cache_bos_num = 10
            self.prefix_bos_num = 100
            self.load_model(model_name, device_map, {"trust_remote_code": False})
            self.oai_tokenizer = _offline_counter(self.tokenizer)
            self.init_llmlingua2()

    return _OfflinePromptCompressor(model_path, device)


class LLMLinguaCompressor:
    """LLMLingua-2 token dropping at `rate` (fraction kept) plus turn-level attention scores.

    The model loads on first use; `close()` releases it."""

    def __init__(self, model_path: str | Path, *, rate: float = 0.7, device: str = "cpu") -> None:
        path = Path(model_path)
        if not any(family in path.name for family in SUPPORTED_FAMILIES):
            raise ConfigError(
                f"compressor model folder {path.name!r} must contain one of {SUPPORTED_FAMILIES}:"
                " llmlingua chooses its tokenisation rules from the model name"
            )
        if not (path / "config.json").is_file():
            raise ConfigError(f"compressor model {path} is not a local model folder")
        if not 0.0 < rate <= 1.0:
            raise ConfigError("compression rate must be in (0, 1]")
        self.path = path
        self.rate = rate
        self.device = device
        self._compressor: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._compressor is None:
                self._compressor = _build_prompt_compressor(str(self.path), self.device)
                # Attention weights are only returned by the eager implementation.
                self._compressor.model.set_attn_implementation("eager")
                self._compressor.model.eval()
                log.info("compression.loaded", model=str(self.path), rate=self.rate)
            return self._compressor

    def compress(self, texts: Sequence[str]) -> list[str]:
        """Each text compressed on its own; a text that compresses to nothing is kept whole
        (LightMem's practical trick), so no turn vanishes from the summariser's view."""
        if self.rate >= 1.0:
            return list(texts)
        compressor = self._loaded()
        out = []
        for text in texts:
            result = compressor.compress_prompt_llmlingua2(
                [text], rate=self.rate, force_tokens=["\n", "?", "!", "."]
            )
            squeezed = str(result["compressed_prompt"]).strip()
            out.append(squeezed or text)
        return out

    def adjacent_attention(self, texts: Sequence[str]) -> list[float | None]:
        """adjacent[i]: attention of turn i to turn i-1, normalised over all earlier turns of the
        same window (App. C.1). None where undefined: a window's first two turns (the second
        has only one predecessor, so its share is trivially 1)."""
        import torch

        compressor = self._loaded()
        tokenizer, model = compressor.tokenizer, compressor.model
        pieces = [
            tokenizer(t, add_special_tokens=False)["input_ids"][: MAX_SEQ_TOKENS - 2] for t in texts
        ]
        adjacent: list[float | None] = [None] * len(texts)
        for start, end in _windows([len(p) for p in pieces], MAX_SEQ_TOKENS - 2):
            ids = [tokenizer.cls_token_id]
            owner = [-1]
            for i in range(start, end):
                ids.extend(pieces[i])
                owner.extend([i - start] * len(pieces[i]))
            ids.append(tokenizer.sep_token_id)
            owner.append(-1)
            with torch.no_grad():
                out = model(input_ids=torch.tensor([ids]), output_attentions=True)
            layers = out.attentions[-UPPER_LAYERS:]
            att = torch.stack([a[0].mean(dim=0) for a in layers]).mean(dim=0)  # (seq, seq)
            scores = _sentence_attention(att, owner, end - start)
            for k in range(2, end - start):
                adjacent[start + k] = scores[k]
        return adjacent

    def attention_boundaries(self, texts: Sequence[str]) -> set[int]:
        """Local peaks of the adjacent-turn attention sequence: a new topic starts there."""
        return attention_peak_boundaries(self.adjacent_attention(texts))

    def close(self) -> None:
        with self._lock:
            self._compressor = None


def _windows(lengths: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Greedy runs of consecutive turns whose tokens fit one encoder window."""
    out: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, n in enumerate(lengths):
        if i > start and used + n > budget:
            out.append((start, i))
            start, used = i, 0
        used += n
    if lengths:
        out.append((start, len(lengths)))
    return out


def _sentence_attention(att: Any, owner: Sequence[int], n: int) -> list[float]:
    """Turn-level attention to the previous turn, from a token-level (seq, seq) matrix.

    Sink tokens (the first and last SINK_TOKENS positions) are masked and rows renormalised;
    sentence-to-sentence attention is the mean over token pairs; each turn's attention to its
    predecessors is normalised to sum to 1 and its share for the immediate predecessor kept."""
    import torch

    seq = att.shape[0]
    att = att.clone()
    att[:, : min(SINK_TOKENS, seq)] = 0.0
    att[:, max(seq - SINK_TOKENS, 0) :] = 0.0
    att = att / att.sum(dim=-1, keepdim=True).clamp_min(1e-12)
    owners = torch.tensor(owner)
    masks = [owners == i for i in range(n)]
    result = [0.0] * n
    for i in range(1, n):
        if not masks[i].any():
            continue
        rows = att[masks[i]]
        to_prev = [float(rows[:, masks[j]].mean()) if masks[j].any() else 0.0 for j in range(i)]
        total = sum(to_prev)
        result[i] = to_prev[i - 1] / total if total > 0 else 0.0
    return result


def attention_boundaries(
    compressor: LLMLinguaCompressor | None, texts: Sequence[str]
) -> set[int] | None:
    """Attention-based topic boundaries (App. C.1), or None when no compressor model is
    configured, in which case segmentation uses similarity alone."""
    if compressor is None or len(texts) < MIN_ATTENTION_TURNS:
        return None
    return compressor.attention_boundaries(texts)


def load_compressor(config: Any) -> LLMLinguaCompressor | None:
    """The configured compressor, or None when compression is off (no model configured)."""
    if not config.compression_enabled:
        return None
    return LLMLinguaCompressor(config.compressor_model, rate=config.compression_rate)
