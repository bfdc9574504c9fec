"""From a model's free text to a validated pydantic object, or a precise complaint.

Models wrap JSON in ```json fences, prose or both; `extract_json` finds the object in any of
those. `parse_reply` validates it and, on failure, raises `InvalidReply` whose message is written
to be shown back to the model in the repair prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


# A whole reply is a few facts or a short answer; a megabyte of JSON is a runaway generation,
# and scanning it for objects would cost seconds per call.
MAX_REPLY_CHARS = 200_000


class InvalidReply(ValueError):
    """The reply is not usable; the message says why, in words a model can act on."""


def json_candidates(text: str) -> list[Any]:
    """Every JSON value `text` may be meant as, most likely first: the whole text, fenced
    blocks, then each object embedded in prose. Raises InvalidReply when there is none.
    A raw newline or tab inside a string (models write them; JSON forbids them) is read as
    that character, not as a broken reply."""
    stripped = text.strip()
    if not stripped:
        raise InvalidReply("the reply was empty")
    try:
        return [json.loads(stripped, strict=False)]
    except json.JSONDecodeError:
        pass
    found: list[Any] = []
    for block in _FENCE.findall(stripped):
        try:
            found.append(json.loads(block.strip(), strict=False))
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and value not in found:
            found.append(value)
    if not found:
        raise InvalidReply("the reply contained no JSON object")
    return found


def extract_json(text: str) -> Any:
    """The JSON value in `text`: the whole text, a fenced block, or the first object in prose."""
    return json_candidates(text)[0]


def describe_validation_error(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"]) or "(top level)"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def parse_reply(text: str, model: type[M], check: Callable[[M], M] | None = None) -> M:
    """Validate `text` against `model`, then the role's own `check` (which may raise
    InvalidReply or return an adjusted object). When prose holds several objects (an echoed
    example, then the answer), the first that validates wins; otherwise the first one's
    problem is reported."""
    if len(text) > MAX_REPLY_CHARS:  # never parse a runaway reply: repair or fall back
        raise InvalidReply(f"the reply is {len(text):,} characters; at most {MAX_REPLY_CHARS:,}")
    first_error: InvalidReply | None = None
    for value in json_candidates(text):
        try:
            if not isinstance(value, dict):
                raise InvalidReply(f"expected a JSON object, got {type(value).__name__}")
            try:
                out = model.model_validate(value)
            except ValidationError as err:
                raise InvalidReply(describe_validation_error(err)) from err
            return check(out) if check is not None else out
        except InvalidReply as exc:
            first_error = first_error or exc
    raise first_error or InvalidReply("the reply contained no JSON object")


def schema_hint(model: type[BaseModel]) -> str:
    """The expected fields, compactly, for the repair prompt."""
    return json.dumps(model.model_json_schema(), separators=(",", ":"))


# A salvaged answer is a short reply; past this it is a runaway generation, not an answer.
MAX_SALVAGE_CHARS = 4_000
_LABEL = re.compile(r"^(?:final\s+)?answer\s*:\s*", re.IGNORECASE)


def salvage_answer(text: str) -> str | None:
    """The answer in a plain-text reply to an answer role, or None when there is none.

    A small model often answers in prose ("I think Jon lost his job in January.") despite being
    asked for JSON; that prose is the answer, and throwing it away loses a correct reply. Only
    text that holds no JSON at all is salvaged: a reply with a JSON object that did not validate,
    or with a brace in it, is a broken structured reply, not prose. An "Answer:" label, a
    wrapping code fence and wrapping quotes are removed; an empty or runaway reply is None."""
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_SALVAGE_CHARS:
        return None
    try:
        found = json_candidates(stripped)
    except InvalidReply:
        pass
    else:  # JSON: only a bare string ("Paris", quoted) or number (3) is an answer
        value = found[0]
        if isinstance(value, str):
            return value.strip() or None
        return stripped if isinstance(value, int | float) and not isinstance(value, bool) else None
    if "{" in stripped or stripped.startswith("["):  # JSON cut short or malformed: not prose
        return None
    fenced = _FENCE.fullmatch(stripped)
    if fenced is not None:
        stripped = fenced.group(1).strip()
    stripped = _LABEL.sub("", stripped).strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "\"'":
        stripped = stripped[1:-1].strip()
    return stripped or None
