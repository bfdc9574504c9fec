"""The metadata options of the write and read commands: `--metadata key=value` (repeatable)
on `hymem add`, `--filter JSON` and the `--agent` / `--run` scopes on search, ask and context.
Parsing only shapes the text; `Memory` validates what it means (`hymem.core.metadata`,
`hymem.core.filters`), so the CLI refuses exactly what the library refuses."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from hymem.core.errors import UserInputError

MetadataOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metadata",
        "-m",
        help="key=value stored on every turn (repeatable); a value that reads as JSON "
        '(3, 2.5, true, "text") keeps that type, anything else is a string',
    ),
]
FilterOpt = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help='metadata filter as JSON, e.g. \'{"topic": "work", "year": {"gte": 2023}}\'',
    ),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="agent_id scope")]
RunOpt = Annotated[str | None, typer.Option("--run", help="run_id scope")]


def parse_metadata(items: list[str] | None) -> dict[str, Any]:
    """`key=value` pairs as a dict; a value that is a JSON scalar keeps its JSON type."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UserInputError(f"--metadata {item!r}: expected key=value")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[key] = value if isinstance(value, str | int | float | bool) else raw
    return out


def parse_filter_json(text: str | None) -> dict[str, Any] | None:
    """The --filter text as a mapping (None when absent); not JSON is a UserInputError."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError(f"--filter is not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise UserInputError("--filter must be a JSON object")
    return value


__all__ = [
    "AgentOpt",
    "FilterOpt",
    "MetadataOpt",
    "RunOpt",
    "parse_filter_json",
    "parse_metadata",
]
