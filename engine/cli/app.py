"""The typer application and the options every command shares."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from hymem.memory import Memory

app = typer.Typer(
    name="hymem",
    help="Hybrid dual-granularity memory for LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

StorePath = Annotated[
    str,
    typer.Option(
        "--store", "-s", help="memory folder, or s3:// gs:// az:// URI", envvar="HYMEM_STORE"
    ),
]
UserOpt = Annotated[str, typer.Option("--user", "-u", help="user_id (isolation boundary)")]
LlmOpt = Annotated[
    str | None,
    typer.Option(
        "--llm", help="extractive | openai:MODEL | hf:PATH (default: HYMEM_LLM or extractive)"
    ),
]
EmbedderOpt = Annotated[
    str | None, typer.Option("--embedder", help="sentence-transformers name/path or 'hashing'")
]

DEFAULT_STORE = os.environ.get("HYMEM_STORE", "./memdata")


def open_memory(
    store: str | Path,
    *,
    llm: str | None = None,
    embedder: str | None = None,
    read_only: bool = False,
) -> Memory:
    """Open a Memory, turning hymem's errors into a clean CLI exit."""
    from hymem.memory import Memory

    return Memory(store, llm=llm, embedder=embedder, read_only=read_only)
