"""Issue 28: what the CLI says beside its output (`hymem.cli.notes`) and the help it renders
(`hymem.cli.help`), without a store."""

from __future__ import annotations

import io
import logging
import os
import sys

import pytest
from hymem.cli import notes
from hymem.cli.help import ORDER, reflow


def test_counts_are_plural_words() -> None:
    assert notes.plural(1, "turn") == "1 turn"
    assert notes.plural(0, "turn") == "0 turns"
    assert notes.plural(2, "summary", "summaries") == "2 summaries"
    assert notes.plural(1, "summary", "summaries") == "1 summary"


def test_the_pending_note_says_what_pending_means_and_what_to_run() -> None:
    assert notes.pending_note(0, "ann") is None
    one = notes.pending_note(1, "ann", buffer_tokens=512) or ""
    assert one.startswith("1 turn of ann is pending: not searchable until flushed")
    assert "512 tokens" in one and "`hymem flush -u ann` stores it now" in one
    many = notes.pending_note(3, "Ann Lee") or ""
    assert many.startswith("3 turns of Ann Lee are pending") and "tokens" not in many
    assert "`hymem flush -u 'Ann Lee'` stores them now" in many  # quoted for the shell


def test_only_a_slow_load_points_to_serve() -> None:
    assert notes.load_note(0.2) is None
    note = notes.load_note(6.5) or ""
    assert "6.5 s" in note and "hymem serve" in note


def test_silencing_sets_only_what_the_user_left_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in notes._QUIET_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "info")  # the user's own choice stays
    monkeypatch.delitem(sys.modules, "transformers", raising=False)  # told by environment only
    monkeypatch.delitem(sys.modules, "huggingface_hub", raising=False)
    notes.silence_third_party()
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    assert os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] == "1"
    assert os.environ["TRANSFORMERS_VERBOSITY"] == "info"


def test_the_cli_mutes_the_library_warning_it_says_in_words() -> None:
    logger = logging.getLogger("hymem.api.memory.pending")
    before = logger.level
    try:
        notes.mute_pending_warning()
        assert not logger.isEnabledFor(logging.WARNING)
    finally:
        logger.setLevel(before)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_stays_only_on_an_interactive_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", _Tty())
    assert notes.interactive_eval(["eval", "locomo", "x.json"])
    assert not notes.interactive_eval(["ask", "q", "-u", "ann"])
    assert not notes.interactive_eval([])
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # piped or captured: quiet
    assert not notes.interactive_eval(["eval", "locomo", "x.json"])


def test_help_text_is_reflowed_by_paragraph() -> None:
    text = """First line
    goes on here.

    Second paragraph
    also joined.

    \b
    kept
    as is"""
    assert reflow(text) == (
        "First line goes on here.\n\nSecond paragraph also joined.\n\n\b\nkept\nas is"
    )
    assert reflow(None) is None


def test_the_command_order_names_each_command_once() -> None:
    from hymem.cli import app
    from typer.main import get_command

    names = set(get_command(app).commands)  # type: ignore[attr-defined]
    assert len(ORDER) == len(set(ORDER))
    assert names == set(ORDER)  # a new command must be placed in the order
