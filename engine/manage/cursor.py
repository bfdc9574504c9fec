"""Opaque page cursors for `get_all`: the key of the last record a page returned, tagged with
its level, as URL-safe base64 JSON. A cursor only ever becomes a typed key (an int, a datetime,
an id string) that the store escapes, so a forged cursor can at worst start another page of
the caller's own records. Anything else (not base64 JSON of that shape, a seq outside int64, an
id with a NUL or a lone surrogate, a date out of range) is a UserInputError, never another
error (tests/adversarial/test_page_cursors.py)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

from hymem.core.errors import UserInputError
from hymem.core.time import to_utc
from hymem.indexes.paging import MAX_SEQ, PageKey

MAX_CURSOR_CHARS = 2_048


def encode(level: str, key: PageKey) -> str:
    value, id_ = key
    raw = value.isoformat() if isinstance(value, datetime) else value
    payload = json.dumps({"l": level, "v": raw, "i": id_}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode(level: str, cursor: str | None) -> PageKey | None:
    if cursor is None:
        return None
    bad = UserInputError("cursor is not one get_all() returned; start again without it")
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
        raise bad
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        value, id_ = data["v"], data["i"]
        if data["l"] != level:
            raise UserInputError(f"this cursor is for listing level {data['l']!r}, not {level!r}")
        if not isinstance(id_, str) or "\x00" in id_ or not id_:
            raise bad
        id_.encode("utf-8")  # a lone surrogate is no id hymem made
        if level == "turn":
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad
            if not 0 <= value <= MAX_SEQ:  # a seq is a non-negative int64
                raise bad
            return (value, id_)
        if not isinstance(value, str):
            raise bad
        return (to_utc(datetime.fromisoformat(value)), id_)
    except UserInputError:
        raise
    except (
        ValueError,
        KeyError,
        TypeError,
        OverflowError,
        RecursionError,
        binascii.Error,
        UnicodeError,
    ):
        raise bad from None


__all__ = ["decode", "encode"]
