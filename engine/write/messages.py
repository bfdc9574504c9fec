"""Validate and normalise the messages of one `add()` call, all of them before anything is written.

A message is a mapping with
    "speaker" or "role"   non-empty string (whitespace trimmed)
    "text" or "content"   non-empty string
    "timestamp"           optional; anything `hymem.core.time.parse_timestamp` accepts
    "id"                  optional non-empty string; re-adding an id is a no-op (first write wins)
A bare mapping is treated as a one-message call, and a plain string as one message
`{"role": "user", "content": text}`: the common case of an agent remembering what its user said
needs no message dict (a blank string is refused like a blank message).

Normalisations (documented, applied to speaker and text):
    * Unicode NFC;
    * lone surrogates (e.g. from broken JSON escapes) replaced by U+FFFD;
    * control characters other than "\\n" and "\\t" removed (CR, NUL, bells, ANSI escapes' ESC);
    * leading/trailing whitespace trimmed.
Errors (each an `InvalidMessageError` naming the message's index and id; nothing from the call is
written): not a mapping, missing/blank speaker, missing text, non-string text, text that is empty
after normalisation, an unparseable timestamp, a non-string id, two messages with the same id but
different content, and text longer than `MAX_MESSAGE_CHARS`.

Size limit: one message may hold up to `MAX_MESSAGE_CHARS` (64 Ki characters, about 16k tokens).
A longer message, e.g. a pasted 1 MB document, is refused with that limit in the error: a turn is
the smallest unit of a segment, and one summariser call per buffer must fit a model's context.
Split documents into several messages. A message under the limit but over the buffer size becomes
a segment of its own and is summarised in a call of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hymem.core.errors import InvalidMessageError, UserInputError
from hymem.core.textclean import normalise_text
from hymem.core.time import parse_timestamp

MAX_MESSAGE_CHARS = 65_536
MAX_SPEAKER_CHARS = 256
MAX_ID_CHARS = 512


@dataclass(frozen=True, slots=True)
class NormalisedMessage:
    """One accepted message, ready to become a TurnRecord."""

    speaker: str
    text: str
    timestamp: datetime
    id: str | None


def _pick(msg: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in msg and msg[name] is not None:
            return msg[name]
    return None


def _one(index: int, msg: object, default_time: datetime) -> NormalisedMessage:
    if not isinstance(msg, Mapping):
        raise InvalidMessageError(index, f"a message must be a mapping, got {type(msg).__name__}")
    raw_id = msg.get("id")
    if raw_id is not None and (not isinstance(raw_id, str) or not raw_id.strip()):
        raise InvalidMessageError(index, "id must be a non-empty string")
    msg_id = normalise_text(raw_id) if isinstance(raw_id, str) else None
    if msg_id is not None and len(msg_id) > MAX_ID_CHARS:
        raise InvalidMessageError(index, f"id is longer than {MAX_ID_CHARS} characters")

    def fail(reason: str) -> InvalidMessageError:
        return InvalidMessageError(index, reason, msg_id)

    speaker = _pick(msg, "speaker", "role")
    if speaker is None:
        raise fail("missing speaker (give 'speaker' or 'role')")
    if not isinstance(speaker, str):
        raise fail(f"speaker must be a string, got {type(speaker).__name__}")
    speaker = normalise_text(speaker)
    if not speaker:
        raise fail("speaker is empty")
    if len(speaker) > MAX_SPEAKER_CHARS:
        raise fail(f"speaker is longer than {MAX_SPEAKER_CHARS} characters")

    text = _pick(msg, "text", "content")
    if text is None:
        raise fail("missing text (give 'text' or 'content')")
    if not isinstance(text, str):
        raise fail(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_MESSAGE_CHARS:
        raise fail(
            f"text has {len(text)} characters; the limit is {MAX_MESSAGE_CHARS} per message "
            "(split long documents into several messages)"
        )
    text = normalise_text(text)
    if not text:
        raise fail("text is empty or whitespace only")

    raw_time = msg.get("timestamp")
    if raw_time is None:
        when = default_time
    else:
        try:
            when = parse_timestamp(raw_time)
        except UserInputError as exc:
            raise fail(str(exc)) from None
    return NormalisedMessage(speaker=speaker, text=text, timestamp=when, id=msg_id)


def normalise_message(msg: object, *, default_time: datetime, index: int = 0) -> NormalisedMessage:
    """One message checked and normalised exactly as `add()` does (import reuses it for every
    turn of a file); raises `InvalidMessageError`."""
    return _one(index, msg, default_time)


Messages = Sequence[Mapping[str, Any]] | Mapping[str, Any] | str
"""What `add()` takes: a list of message mappings, one mapping, or one user message's text."""

USER_ROLE = "user"  # the speaker of a message given as a plain string


def normalise_messages(messages: Messages, *, default_time: datetime) -> list[NormalisedMessage]:
    """Validate the whole call; raise on the first bad message, so nothing is half-written.

    Messages repeating an id with the same speaker and text are collapsed into the first;
    conflicting content under one id is an error.
    """
    if isinstance(messages, str):
        messages = [{"role": USER_ROLE, "content": messages}]
    elif isinstance(messages, Mapping):
        messages = [messages]
    if isinstance(messages, bytes) or not isinstance(messages, Sequence):
        raise UserInputError(
            "messages must be a list of mappings, one mapping, or one message's text"
        )
    if not messages:
        raise UserInputError("messages is empty")
    out: list[NormalisedMessage] = []
    seen: dict[str, NormalisedMessage] = {}
    for index, msg in enumerate(messages):
        norm = _one(index, msg, default_time)
        if norm.id is not None:
            first = seen.get(norm.id)
            if first is not None:
                if (first.speaker, first.text) != (norm.speaker, norm.text):
                    raise InvalidMessageError(
                        index,
                        "id repeats an earlier message of this call with other content",
                        norm.id,
                    )
                continue
            seen[norm.id] = norm
        out.append(norm)
    return out
