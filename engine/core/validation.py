"""Argument checks shared by the facade and the CLI: caller mistakes become UserInputError."""

from __future__ import annotations

import os
import re

from hymem.core.errors import UserInputError
from hymem.core.types import Level

MAX_USER_ID_CHARS = 256
MAX_SESSION_ID_CHARS = 256
# Defaults of MemoryConfig.max_k / max_query_chars. A size argument reaches Tantivy and LanceDB,
# which allocate for it up front (k=10**9 made Tantivy ask for 32 GB and abort the process), so
# every k, N and d is bounded here; queries are bounded because answering reads every word.
MAX_K = 1_000
MAX_QUERY_CHARS = 20_000
MAX_ITERATIONS = 20
# A corrected memory is one key-information sentence or a few: this bounds what update() embeds.
MAX_MEMORY_TEXT_CHARS = 4_000
MAX_RECORD_ID_CHARS = 256
# Lone surrogates cannot be encoded to UTF-8: pyarrow and Tantivy raise on them deep inside a
# write or a query, so identifiers and queries holding one are refused at the door.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_encodable(value: str, what: str) -> None:
    if _SURROGATE.search(value):
        raise UserInputError(
            f"{what} contains a lone UTF-16 surrogate (a broken escape?); it cannot be stored"
        )


def _check_identifier(value: object, name: str, max_chars: int, blank: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UserInputError(blank)
    if len(value) > max_chars:
        raise UserInputError(f"{name} is longer than {max_chars} characters")
    if "\x00" in value:
        raise UserInputError(f"{name} must not contain NUL characters")
    _check_encodable(value, name)
    return value


def check_user_id(user_id: object) -> str:
    """user_id is the isolation boundary, so it is mandatory and must be a non-blank string."""
    blank = "user_id is required and must be a non-empty string"
    return _check_identifier(user_id, "user_id", MAX_USER_ID_CHARS, blank)


def check_session_id(session_id: object) -> str:
    blank = "session_id must be a non-empty string"
    return _check_identifier(session_id, "session_id", MAX_SESSION_ID_CHARS, blank)


def check_query(query: object, *, max_chars: int = MAX_QUERY_CHARS, name: str = "query") -> str:
    """A search query, or (`name="question"`) an ask's question, as the caller named it."""
    if not isinstance(query, str) or not query.strip():
        raise UserInputError(f"{name} must be a non-empty, non-whitespace string")
    if len(query) > max_chars:
        raise UserInputError(
            f"{name} is {len(query):,} characters; the limit is {max_chars:,} (max_query_chars):"
            " ask about one thing at a time"
        )
    _check_encodable(query, name)
    return query


def check_memory_text(text: object) -> str:
    """The text of a corrected memory (update): non-blank, bounded, storable."""
    if not isinstance(text, str) or not text.strip():
        raise UserInputError("a memory's text must be a non-empty, non-whitespace string")
    if len(text) > MAX_MEMORY_TEXT_CHARS:
        raise UserInputError(
            f"a memory's text is {len(text):,} characters; the limit is {MAX_MEMORY_TEXT_CHARS:,}"
        )
    if "\x00" in text:
        raise UserInputError("a memory's text must not contain NUL characters")
    _check_encodable(text, "the memory's text")
    return text.strip()


def check_record_id(record_id: object, name: str = "memory_id") -> str:
    blank = f"{name} is required and must be a non-empty string"
    return _check_identifier(record_id, name, MAX_RECORD_ID_CHARS, blank)


def check_k(k: object, *, name: str = "k", maximum: int = MAX_K) -> int:
    """A positive int no larger than `maximum` (MemoryConfig.max_k for k, N and d)."""
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise UserInputError(f"{name} must be a positive integer, got {k!r}")
    if k > maximum:
        raise UserInputError(f"{name}={k:,} is larger than the limit {maximum:,} (max_k)")
    return k


def check_iterations(value: object, *, maximum: int = MAX_ITERATIONS) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise UserInputError(
            f"max_iterations must be an integer from 0 to {maximum}, got {value!r}"
        )
    return value


def check_level(level: object) -> Level:
    if isinstance(level, Level):
        return level
    if isinstance(level, str):
        try:
            return Level(level)
        except ValueError:
            pass
    raise UserInputError(f"unknown level {level!r}: use {', '.join(repr(v.value) for v in Level)}")


_PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_store_path(path: object) -> str:
    """A memory folder path or object-store URI: a str or PathLike with no control characters
    (a newline in a path is almost always a pasting mistake, and it would create a stray
    folder). Returned as text: `Path` would fold the `//` of `s3://`."""
    if not isinstance(path, str | os.PathLike):
        raise UserInputError(f"path must be a string or a Path, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise UserInputError("path must be a non-empty folder path")
    if _PATH_CONTROL.search(text):
        raise UserInputError(f"path {text!r} contains a control character (a newline?)")
    _check_encodable(text, "path")
    return text
