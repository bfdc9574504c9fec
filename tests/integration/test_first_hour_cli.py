"""Issue 28 through the command line, as a new user meets it: the README's add-then-search
example explains its pending turn (case 1), a mistyped --store is an error (case 2), model
loading is quiet and reported apart from latency (case 3), and the help reads well (case 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app, notes
from hymem.core.errors import StoreError
from hymem.embed.embedders import SentenceTransformerEmbedder
from typer.testing import CliRunner

pytestmark = pytest.mark.integration

runner = CliRunner()
EMB = ["--embedder", "hashing:64"]
TURN = json.dumps([{"speaker": "Ann", "text": "The report is due Friday."}])


def flat(text: str) -> str:
    """The output as one line: rich wraps at the (test) terminal's 80 columns."""
    return " ".join(text.split())


@pytest.fixture
def store(tmp_path: Path) -> str:
    return str(tmp_path / "m")


def add(store: str, *extra: str) -> str:
    res = runner.invoke(
        app, ["add", "-u", "ann", "-m", "topic=work", "-s", store, *EMB, *extra], input=TURN
    )
    assert res.exit_code == 0, res.output
    return flat(res.output)


# --- case 1: turns wait unsearched ---------------------------------------------------------


def test_add_says_its_turn_is_pending_and_how_to_store_it(store: str) -> None:
    out = add(store)
    assert "accepted 1 turn (1 new); wrote 0 segments, 0 summaries" in out
    assert "1 turn of ann is pending: not searchable until flushed" in out
    assert "reach 512 tokens" in out and "`hymem flush -u ann` stores it now" in out


def test_readme_example_search_says_why_it_found_nothing(store: str) -> None:
    add(store)
    search = ["search", "due", "-u", "ann", "--filter", '{"topic": "work"}', "-s", store, *EMB]
    res = runner.invoke(app, search)
    assert res.exit_code == 0, res.output
    assert "no hits" in res.stdout
    assert "1 turn of ann is pending: not searchable until flushed" in flat(res.stderr)
    for cmd in (["ask", "When is the report due?"], ["context", "When is the report due?"]):
        res = runner.invoke(app, [*cmd, "-u", "ann", "-s", store, *EMB])
        assert res.exit_code == 0, res.output
        assert "pending: not searchable until flushed" in flat(res.stderr), cmd

    res = runner.invoke(app, ["flush", "-u", "ann", "-s", store, *EMB])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, search)
    assert "Friday" in res.stdout and "pending" not in res.stderr


def test_add_with_flush_is_searchable_at_once(store: str) -> None:
    out = add(store, "--flush")
    assert "0 pending" in out and "not searchable" not in out
    assert re.search(r"wrote 1 segment, \d+ summar", out)
    res = runner.invoke(app, ["search", "due", "-u", "ann", "-s", store, "--json", *EMB])
    assert res.exit_code == 0, res.output
    assert "Friday" in res.stdout and "pending" not in res.stderr


# --- case 2: a mistyped --store ------------------------------------------------------------

READ_COMMANDS = [
    ["ask", "When is the report due?", "-u", "ann"],
    ["search", "due", "-u", "ann"],
    ["context", "When is the report due?", "-u", "ann"],
    ["list", "-u", "ann"],
    ["get", "abc", "-u", "ann"],
    ["history", "abc", "-u", "ann"],
    ["pending", "-u", "ann"],
    ["flush", "-u", "ann"],
    ["stats"],
    ["export", "-u", "ann", "-o", "out.jsonl"],
    ["sleep"],
]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: c[0])
def test_commands_on_a_mistyped_store_refuse_it(tmp_path: Path, command: list[str]) -> None:
    with Memory(tmp_path / "memdata", config=MemoryConfig.defaults(embedder="hashing:64")):
        pass
    typo = tmp_path / "memdta"
    res = runner.invoke(app, [*command, "-s", str(typo), *EMB])
    assert isinstance(res.exception, StoreError), res.output
    message = str(res.exception)
    assert f"no hymem memory at {typo}" in message and "hymem add --store" in message
    assert not typo.exists()


def test_add_creates_a_memory_only_where_its_parent_exists(tmp_path: Path) -> None:
    deep = tmp_path / "no" / "such" / "mem"
    res = runner.invoke(app, ["add", "--text", "hi", "-u", "ann", "-s", str(deep), *EMB])
    assert isinstance(res.exception, StoreError) and "parent folder" in str(res.exception)
    assert not (tmp_path / "no").exists()


# --- case 3: model loading -----------------------------------------------------------------


def test_ask_reports_model_loading_apart_from_its_latency(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(store, "--flush")
    res = runner.invoke(app, ["ask", "When is the report due?", "-u", "ann", "-s", store, *EMB])
    assert res.exit_code == 0, res.output
    assert re.search(r"latency=\d+ ms load=\d+ ms", flat(res.stdout))
    assert "hymem serve" not in res.output  # the hashing embedder loads in no time

    monkeypatch.setattr(notes, "LOAD_HINT_S", 0.0)  # as if loading had been slow
    res = runner.invoke(app, ["ask", "When is the report due?", "-u", "ann", "-s", store, *EMB])
    assert "loading the models took" in flat(res.stderr)
    assert "`hymem serve` keeps them loaded" in flat(res.stderr)
    assert "hymem serve" not in res.stdout  # stdout keeps the answer only
    res = runner.invoke(app, ["search", "due", "-u", "ann", "-s", store, "--json", *EMB])
    assert "`hymem serve` keeps them loaded" in flat(res.stderr)
    assert json.loads(res.stdout.splitlines()[0])["text"]


def test_minilm_loads_without_a_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()  # as an application would have it: bars on
    try:
        capfd.readouterr()
        SentenceTransformerEmbedder().embed(["a fresh model, loaded now"])
        err = capfd.readouterr().err
        assert "Loading weights" not in err and "it/s" not in err
        assert hf_logging.is_progress_bar_enabled()  # the application's setting is back
    finally:
        if not was:
            hf_logging.disable_progress_bar()


# --- case 9: the help ----------------------------------------------------------------------


def test_version() -> None:
    from hymem import __version__

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"hymem {__version__}"


def test_commands_are_listed_in_the_order_a_user_meets_them() -> None:
    res = runner.invoke(app, ["--help"], env={"TERMINAL_WIDTH": "120"})
    names = re.findall(r"^│ (\w+) ", res.stdout, flags=re.M)
    assert names[:6] == ["add", "flush", "pending", "search", "ask", "context"]
    assert names[-4:] == ["keys", "mcp", "eval", "dashboard"]
    assert names.index("list") < names.index("sleep") < names.index("stats") < names.index("serve")


def test_help_wraps_at_the_terminal_not_at_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("typer.rich_utils.MAX_WIDTH", 200)
    res = runner.invoke(app, ["--help"])
    assert "then rebuild what is derived; says what was lost." in res.stdout
    res = runner.invoke(app, ["pending", "--help"])
    assert "accepted but not yet summarised (read-only: works while another process" in res.stdout


@pytest.mark.parametrize("command", ["search", "ask", "add", "list", "sleep", "mcp", "serve"])
def test_options_carry_no_str_or_bool_labels(command: str) -> None:
    res = runner.invoke(app, [command, "--help"])
    assert res.exit_code == 0, res.output
    options = res.stdout.split("Options")[1]
    assert "<bool>" not in options and "<str>" not in options
    assert "<list[" not in options


def test_search_help_fits_80_columns() -> None:
    res = runner.invoke(app, ["search", "--help"], env={"COLUMNS": "80"})
    assert "--include-inactive" in res.stdout and "--no-include-inactive" not in res.stdout
    assert "…" not in res.stdout


def test_ask_shows_where_its_sizes_come_from() -> None:
    res = runner.invoke(app, ["ask", "--help"], env={"TERMINAL_WIDTH": "160"})
    for setting, default in (("LIGHT_TOKENS", 400), ("N_DEEP", 30), ("SELECT_BATCH", 10)):
        assert f"HYMEM_{setting} or {default}" in res.stdout


def test_list_titles_and_counts_are_plural_words(store: str) -> None:
    add(store, "--flush")
    res = runner.invoke(app, ["list", "-u", "ann", "-s", store, *EMB])
    assert res.exit_code == 0, res.output
    assert "summaries" in res.stdout and "summarys" not in res.stdout
    res = runner.invoke(app, ["list", "-u", "ann", "--level", "segment", "-s", store, *EMB])
    assert "segments" in res.stdout
    res = runner.invoke(app, ["add", "--text", "hi", "-u", "ann", "-s", store, *EMB])
    assert "accepted 1 turn (1 new)" in flat(res.stdout)
    res = runner.invoke(app, ["pending", "-u", "ann", "-s", store, *EMB])
    assert "1 pending turn of ann" in flat(res.stdout)
