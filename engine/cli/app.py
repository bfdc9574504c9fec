"""The typer application and the options every command shares."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from hymem.cli.help import HymemTyper
from hymem.core.version import __version__

if TYPE_CHECKING:
    from hymem.api.memory import Memory
    from hymem.core.config import MemoryConfig

app = HymemTyper(
    name="hymem",
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
        "--llm",
        help=(
            "extractive | openai:MODEL | gguf:PATH | local | hf:PATH"
            " (default: HYMEM_LLM or extractive)"
        ),
    ),
]
EmbedderOpt = Annotated[
    str | None, typer.Option("--embedder", help="sentence-transformers name/path or 'hashing'")
]

DEFAULT_STORE = os.environ.get("HYMEM_STORE", "./memdata")
# How long a command lets the webhook events it made go out before it exits (unless
# HYMEM_WEBHOOK_DRAIN_S says otherwise): its process is gone before a later delivery could be.
CLI_WEBHOOK_DRAIN_S = 5.0


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"hymem {__version__}")
        raise typer.Exit


@app.callback()
def hymem(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Hybrid dual-granularity memory for LLM agents."""


def cli_config(llm: str | None = None, embedder: str | None = None) -> MemoryConfig:
    """The settings `open_memory` will use (HYMEM_* and these options), without opening
    anything: a command checks its arguments against them before it opens the memory or
    loads a model, so a simple mistake is reported at once."""
    from hymem.api.memory_args import with_overrides

    config = with_overrides(None, llm=llm, embedder=embedder)
    if config.webhooks and "webhook_drain_s" not in config.model_fields_set:
        config = config.updated(webhook_drain_s=CLI_WEBHOOK_DRAIN_S)
    return config


def open_memory(
    store: str | Path,
    *,
    llm: str | None = None,
    embedder: str | None = None,
    read_only: bool = False,
    create: bool | None = False,
) -> Memory:
    """The Memory a command works on. Only commands that bring data (add, import, ingest,
    serve, mcp) pass `create=None`: every other one refuses a path that holds no memory, so a
    mistyped `--store` is an error instead of a new empty memory."""
    from hymem.api.memory import Memory

    config = cli_config(llm, embedder)
    return Memory(store, config=config, read_only=read_only, create=create)
