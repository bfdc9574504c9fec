"""Argument checks shared by the facade and the CLI: caller mistakes become UserInputError."""

from __future__ import annotations

from hymem.errors import UserInputError
from hymem.types import Level

MAX_USER_ID_CHARS = 256


def check_user_id(user_id: object) -> str:
    """user_id is the isolation boundary, so it is mandatory and must be a non-blank string."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise UserInputError("user_id is required and must be a non-empty string")
    if len(user_id) > MAX_USER_ID_CHARS:
        raise UserInputError(f"user_id is longer than {MAX_USER_ID_CHARS} characters")
    if "\x00" in user_id:
        raise UserInputError("user_id must not contain NUL characters")
    return user_id


def check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise UserInputError("query must be a non-empty, non-whitespace string")
    return query


def check_k(k: object, *, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise UserInputError(f"{name} must be a positive integer, got {k!r}")
    return k


def check_level(level: object) -> Level:
    try:
        return Level(level)
    except ValueError:
        raise UserInputError(
            f"unknown level {level!r}: use {', '.join(repr(v.value) for v in Level)}"
        ) from None
