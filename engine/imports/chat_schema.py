"""The chat export formats hymem reads, as pydantic models, and the one rule for their times.

Each model names the fields the reader uses and ignores the rest (exports gain fields often).
A field the reader uses must have its JSON type: an object where an object belongs (a message,
its author, content and metadata, an attachment), a list where a list belongs (a message tree's
children, content parts, chat messages, attachments, files), a string where a string does;
otherwise the export is refused (`validation_reason` says which field, never echoing the value).
A value read only when it is a string (a content block's `text`, an attachment's `file_name`)
is read loosely.

Ids (`ExportId`): a string, or an integer (JSON Lines written by hand number their messages),
read as its decimal; null, "" and blanks mean no id, and the reader gives the message one.

Times (`ExportTime`): a number is seconds since 1970-01-01 UTC, except that a number of
`MS_FROM` (1e11) or more is milliseconds: 1e11 seconds is the year 5138, where no chat lives,
while 1e11 milliseconds is March 1973, and tools that write milliseconds write about 1.7e12. A
string is what `hymem.core.time.parse_timestamp` reads (ISO 8601, or an absolute date such as
"8 May 2023"). Either must fall within 1970-01-01 .. 9999-12-31 UTC; NaN, infinities, booleans
and other JSON types are refused. null and "" mean no time.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated, Any

from hymem.core.errors import UserInputError
from hymem.core.time import parse_timestamp
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

MS_FROM = 100_000_000_000  # an epoch number this large or larger is milliseconds
EPOCH = datetime(1970, 1, 1)
_END_SECONDS = 253_402_300_800  # 10000-01-01T00:00:00 UTC: the first instant out of range


def export_time(value: object) -> datetime | None:
    """One export timestamp as naive UTC (see the module docstring); ValueError says why not."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"a time must be a number or a string, not {_kind(value)}")
    if isinstance(value, str):
        try:
            when = parse_timestamp(value)
        except UserInputError as exc:
            raise ValueError(str(exc)) from None
        if when < EPOCH:
            raise ValueError(f"{when.isoformat()} is before 1970")
        return when
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a time")
    if value < 0:
        raise ValueError("a negative number is before 1970")
    if value >= _END_SECONDS * 1000:  # compared before dividing: a huge int has no float
        raise ValueError("the number is after the year 9999, even read as milliseconds")
    if value >= MS_FROM:
        return EPOCH + timedelta(milliseconds=value)
    return EPOCH + timedelta(seconds=value)


def export_id(value: object) -> str | None:
    """An export's id: a string, or an integer read as its decimal; blank means none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        return value
    raise ValueError(f"an id must be a string or an integer, not {_kind(value)}")


def _parts(value: object) -> object:
    """A ChatGPT message's content parts: text, or objects (pointers to images and files)."""
    if isinstance(value, list):
        for i, part in enumerate(value):
            if not isinstance(part, str | dict):
                raise ValueError(f"part {i} is {_kind(part)}, not text or an object")
    return value


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), "null" if value is None else "a number")


ExportTime = Annotated[datetime | None, BeforeValidator(export_time)]
ExportId = Annotated[str | None, BeforeValidator(export_id)]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


# --- ChatGPT: conversations.json of a data export -----------------------------------------
class GptAuthor(_Shape):
    role: str | None = None


class GptContent(_Shape):
    parts: Annotated[list[Any] | None, BeforeValidator(_parts)] = None
    text: Any = None  # code, execution output and the like: kept when a string


class GptMessage(_Shape):
    id: ExportId = None
    author: GptAuthor | None = None
    create_time: ExportTime = None
    content: GptContent | None = None
    weight: float | None = None
    metadata: dict[str, Any] | None = None


class GptNode(_Shape):
    message: GptMessage | None = None
    parent: str | None = None
    children: list[str] | None = None


class GptConversation(_Shape):
    id: str | None = None
    conversation_id: str | None = None
    create_time: ExportTime = None
    current_node: str | None = None
    mapping: dict[str, GptNode]


# --- Claude: conversations.json of a data export ------------------------------------------
class ClaudeBlock(_Shape):
    text: Any = None  # a text block's text; tool use and results hold other keys


class ClaudeAttachment(_Shape):
    file_name: Any = None
    extracted_content: str | None = None


class ClaudeMessage(_Shape):
    uuid: ExportId = None
    sender: str | None = None
    text: str | None = None
    content: list[ClaudeBlock] | None = None
    created_at: ExportTime = None
    parent_message_uuid: str | None = None
    attachments: list[ClaudeAttachment] | None = None
    files: list[Any] | None = None


class ClaudeConversation(_Shape):
    uuid: str
    created_at: ExportTime = None
    current_leaf_message_uuid: str | None = None
    chat_messages: list[ClaudeMessage]


# --- JSON Lines: one message per line -----------------------------------------------------
class JsonlMessage(_Shape):
    text: str | None = None
    content: str | None = None
    id: ExportId = None
    speaker: str | None = None
    role: str | None = None
    timestamp: ExportTime = None
    session_id: ExportId = None
    conversation_id: ExportId = None
    user_id: str | None = None


def validation_reason(exc: ValidationError) -> str:
    """The first problem pydantic found, as "field.path: why" (the value is never echoed: it
    may be huge, or nested deeply enough to break a repr)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    at = ".".join(_clip(str(p)) for p in first["loc"]) or "the value"
    why = "missing" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"{at}: {why[:1].lower()}{why[1:]}{more}"


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "EPOCH",
    "MS_FROM",
    "ClaudeConversation",
    "ClaudeMessage",
    "ExportId",
    "ExportTime",
    "GptConversation",
    "GptMessage",
    "JsonlMessage",
    "export_id",
    "export_time",
    "validation_reason",
]
