"""How `hymem --help` reads: commands in the order a user meets them, help text wrapped by rich
at the terminal's width instead of at the source's line breaks, and no `<str>` / `<bool>` type
labels (a flag takes no value, and each option's help says what its value is; labels that say
more, such as `<int>` or a choice's values, stay).

`HymemTyper` is `typer.Typer` with these command and group classes as its defaults, so every
command registered on it (or on a sub-app made with it) renders this way."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.models import CommandFunctionType

# The order `hymem --help` lists commands in: writing, reading, looking at and correcting
# memories, consolidation, moving users in and out, maintenance, serving, evaluation.
ORDER = (
    "add",
    "flush",
    "pending",
    "search",
    "ask",
    "context",
    "replay",
    "list",
    "get",
    "history",
    "update",
    "delete",
    "restore",
    "profile",
    "sleep",
    "audit",
    "export",
    "import",
    "import-chat",
    "erase",
    "ingest",
    "stats",
    "optimize",
    "reindex",
    "upgrade",
    "doctor",
    "repair",
    "webhooks",
    "serve",
    "keys",
    "mcp",
    "eval",
    "dashboard",
)
_PLAIN = ("<str>", "<bool>")  # labels that say nothing the help does not
# `ctx` below is typer's vendored click Context (`typer._click`), typed Any: a private module.


def reflow(text: str | None) -> str | None:
    """Each paragraph on one line, for rich to wrap: line breaks inside a paragraph are the
    source's 100-column wrapping, not the author's layout. Blank lines still part paragraphs,
    and one that starts with click's `\\b` marker keeps its lines."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(
        p if p.startswith("\b") else " ".join(line.strip() for line in p.splitlines())
        for p in paragraphs
    )


def _plain_label(param: Any, ctx: Any) -> None:
    """Drop a parameter's `<str>` / `<bool>` / `<list[...]>` label, and `<int range>` (the
    range itself still shows): an option's by an empty metavar; an argument's name is shown
    in capitals (the usual form) instead."""
    if param.metavar is not None:
        return
    if isinstance(param, TyperArgument):
        param.metavar = (param.name or "").upper()
    elif isinstance(param, TyperOption):
        label = param.display_type_rich(ctx) or ""
        if label in _PLAIN or label.startswith("<list[") or label.endswith(" range>"):
            param.metavar = ""


class HelpCommand(TyperCommand):
    """A command whose help text is reflowed and whose parameters carry no plain labels."""

    def __init__(self, name: str | None, **attrs: Any) -> None:
        attrs["help"] = reflow(attrs.get("help"))
        super().__init__(name, **attrs)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):  # the help option included
            _plain_label(param, ctx)
        super().format_help(ctx, formatter)


class HelpGroup(TyperGroup):
    """A group listing its commands in `ORDER` (others after, as registered)."""

    def __init__(self, **attrs: Any) -> None:
        attrs["help"] = reflow(attrs.get("help"))
        super().__init__(**attrs)

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: n for n, name in enumerate(ORDER)}
        return sorted(super().list_commands(ctx), key=lambda name: rank.get(name, len(ORDER)))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.get_params(ctx):
            _plain_label(param, ctx)
        super().format_help(ctx, formatter)


class HymemTyper(typer.Typer):
    """`typer.Typer` whose groups and commands render help as this module describes."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(cls=HelpGroup, **attrs)

    def command(
        self, *args: Any, **attrs: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        attrs.setdefault("cls", HelpCommand)
        return super().command(*args, **attrs)


__all__ = ["ORDER", "HelpCommand", "HelpGroup", "HymemTyper", "reflow"]
