"""Signed page cursors for `get_all`: the key of the last record a page returned, tagged with its
level, as URL-safe base64 JSON, then `.` and an HMAC-SHA256 tag over that payload and the user
whose listing made it. Only hymem can make a cursor: anything else (a payload it did not sign,
one edited after signing, a cursor of another user's listing or of another store) is refused
before its payload is read, with a UserInputError.

The signing secret is the store's own, drawn when the store is created and kept in its meta
(`meta.json` and the `meta` table; a folder made before cursors were signed gets one the next
time a writer opens it), so every process opening the store, and one after a restart, accepts
the cursors of the others. `MemoryConfig.cursor_secret` (`HYMEM_CURSOR_SECRET`) replaces it
where set (to rotate it, or for an object store made before cursors were signed); a store with
neither (an in-memory one, such an object store) signs with a random key of the process, and
its cursors last as long as the process that made them.

A signed payload still only ever becomes a typed key (an int, a datetime, an id string) that the
store escapes, and any payload that is not of that shape (a seq outside int64, an id with a NUL
or a lone surrogate, a date out of range) is a UserInputError too, never another error
(tests/adversarial/test_page_cursors.py)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from hymem.core.errors import UserInputError
from hymem.core.time import to_utc
from hymem.indexes.folder.lock import CURSOR_KEY
from hymem.indexes.paging import MAX_SEQ, PageKey
from pydantic import SecretStr

MAX_CURSOR_CHARS = 2_048
# Drawn once per process: the signing key where no cursor secret is configured.
PROCESS_SECRET = secrets.token_bytes(32)
_PURPOSE = b"hymem get_all page cursor v1"  # the configured secret may serve other uses too
_SEP = "."  # not in the URL-safe base64 alphabet


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PageCursors:
    """Makes and checks the cursors of one memory's listings with one key (`secret`, else the
    process's own)."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._key = hmac.new(secret or PROCESS_SECRET, _PURPOSE, hashlib.sha256).digest()

    @classmethod
    def of(cls, meta: Mapping[str, Any], configured: SecretStr | None = None) -> PageCursors:
        """The cursors of a store with `meta`: signed with the configured secret, else the
        store's own (`CURSOR_KEY`), else the process's."""
        secret = configured.get_secret_value() if configured else meta.get(CURSOR_KEY)
        return cls(secret.encode("utf-8") if isinstance(secret, str) and secret else None)

    def encode(self, level: str, user_id: str, key: PageKey) -> str:
        value, id_ = key
        raw = value.isoformat() if isinstance(value, datetime) else value
        payload = json.dumps({"l": level, "v": raw, "i": id_}, separators=(",", ":"))
        return self.seal(user_id, payload.encode("utf-8"))

    def seal(self, user_id: str, payload: bytes) -> str:
        """`payload` signed for `user_id`'s listings."""
        body = _b64(payload)
        return body + _SEP + _b64(self._tag(user_id, body))

    def decode(self, level: str, user_id: str, cursor: str | None) -> PageKey | None:
        """The key a cursor of `user_id`'s listing at `level` holds; None for no cursor."""
        if cursor is None:
            return None
        bad = UserInputError("cursor is not one get_all() returned; start again without it")
        if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
            raise bad
        body, _, tag = cursor.partition(_SEP)
        try:
            given, expected = tag.encode("ascii"), _b64(self._tag(user_id, body)).encode("ascii")
        except UnicodeError:  # not base64 text: no cursor hymem made
            raise bad from None
        if not hmac.compare_digest(given, expected):
            raise bad
        return _key(level, body, bad)

    def _tag(self, user_id: str, body: str) -> bytes:
        # The user as JSON (ASCII, quoted): no user id and body can run into another pair.
        message = json.dumps(user_id).encode("ascii") + b"\n" + body.encode("ascii")
        return hmac.new(self._key, message, hashlib.sha256).digest()


def _key(level: str, body: str, bad: UserInputError) -> PageKey:
    """The typed key of a signed payload; `bad` for any payload not of a cursor's shape."""
    try:
        data = json.loads(_unb64(body))
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


__all__ = ["MAX_CURSOR_CHARS", "PROCESS_SECRET", "PageCursors"]
