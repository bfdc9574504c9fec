"""The one text normalisation for everything hymem stores or returns: user messages and model
replies alike.

A model's reply is as untrusted as a user's message: a lone surrogate from a broken `\\ud800`
escape cannot be encoded to UTF-8, so pyarrow raised deep inside a commit and the write path
stalled on every retry; NUL and other control characters corrupt logs and terminals. So both
sides pass through `normalise_text`:
    * lone surrogates replaced by U+FFFD;
    * Unicode NFC;
    * control characters other than "\\n" and "\\t" removed (CR, NUL, bells, ANSI escapes' ESC);
    * leading/trailing whitespace trimmed.
`clip` cuts an over-long model text at a word boundary (user text is refused instead, see
`write.messages`, because the caller can split it; a model cannot be asked to).
"""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls and DEL, except \t (09) and \n (0A).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def normalise_text(value: str) -> str:
    """Apply the module's documented normalisations (order matters: surrogates first)."""
    value = _SURROGATE.sub("\ufffd", value)
    value = unicodedata.normalize("NFC", value)
    value = _CONTROL.sub("", value)
    return value.strip()


def clip(value: str, limit: int) -> str:
    """`value` cut to at most `limit` characters, at the last space when there is one."""
    if len(value) <= limit:
        return value
    cut = value[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


__all__ = ["clip", "normalise_text"]
