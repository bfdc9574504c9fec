"""`hymem add/pending/flush` and `hymem ingest locomo` against a real memory folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hymem.cli import app
from hymem.core.errors import InvalidMessageError, UserInputError
from typer.testing import CliRunner

from tests.fixtures_ingest import LOCOMO_MINI

pytestmark = pytest.mark.integration

runner = CliRunner()


def json_out(stdout: str) -> object:
    """The JSON document of a --json command (structlog's events may precede it on stdout)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line[:1] in "[{" and line[:2] != "[2")
    return json.loads("\n".join(lines[start:]))


def test_add_pending_flush_round_trip(tmp_path: Path) -> None:
    store = str(tmp_path / "m")
    common = ["--store", store, "--embedder", "hashing"]
    jsonl = tmp_path / "msgs.jsonl"
    jsonl.write_text(
        "\n".join(
            json.dumps({"speaker": "Ann", "text": f"I adopted cat {i}", "id": f"c{i}"})
            for i in range(3)
        )
    )
    res = runner.invoke(app, ["add", str(jsonl), "--user", "ann", "-t", "2023-05-08", *common])
    assert res.exit_code == 0, res.output
    assert "accepted 3 turns (3 new)" in res.output

    res = runner.invoke(app, ["pending", "--user", "ann", "--json", *common])
    assert res.exit_code == 0, res.output
    assert [t["id"] for t in json_out(res.stdout)] == ["c0", "c1", "c2"]

    res = runner.invoke(
        app,
        ["add", "-", "--user", "ann", *common],
        input=json.dumps({"speaker": "Ann", "text": "I adopted cat 0", "id": "c0"}),
    )
    assert res.exit_code == 0 and "(0 new)" in res.output

    res = runner.invoke(app, ["flush", "--user", "ann", "--json", *common])
    assert res.exit_code == 0, res.output
    out = json_out(res.stdout)
    assert out["pending"] == 0 and out["segments_written"] and out["backend"] == "extractive"


def test_bad_input_is_a_typed_error_and_writes_nothing(tmp_path: Path) -> None:
    common = ["--store", str(tmp_path / "m"), "--embedder", "hashing"]
    res = runner.invoke(app, ["add", "-", "--user", "ann", *common], input="{not json")
    assert isinstance(res.exception, UserInputError)
    bad = json.dumps([{"speaker": "a", "text": "ok"}, {"speaker": "a", "text": " "}])
    res = runner.invoke(app, ["add", "-", "--user", "ann", *common], input=bad)
    assert isinstance(res.exception, InvalidMessageError) and res.exception.index == 1
    res = runner.invoke(app, ["pending", "--user", "ann", "--json", *common])
    assert json_out(res.stdout) == []


def test_ingest_locomo_reports_what_was_stored_and_its_cost(tmp_path: Path) -> None:
    args = [
        "ingest",
        "locomo",
        str(LOCOMO_MINI),
        "--store",
        str(tmp_path / "m"),
        "--embedder",
        "hashing",
        "--per-session",
    ]
    res = runner.invoke(app, [*args, "-c", "conv-mini-2"])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.stdout.splitlines() if line.startswith("│ conv-mini-2"))
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[0] == "conv-mini-2" and cells[1] == "20"
    assert int(cells[2]) > 0 and int(cells[3]) > 0 and int(cells[4]) >= 2  # L2, L1, calls
    assert cells[6] == "0" and cells[8] == "0"  # nothing pending, no errors
    assert "summariser backend: extractive" in res.stdout
    res = runner.invoke(app, [*args, "-c", "conv-nope"])
    assert isinstance(res.exception, UserInputError)


def test_add_text_stores_one_user_message(tmp_path: Path) -> None:
    common = ["--store", str(tmp_path / "m"), "--embedder", "hashing"]
    res = runner.invoke(app, ["add", "--text", "I adopted a cat", "--user", "ann", *common])
    assert res.exit_code == 0, res.output
    assert "accepted 1 turn (1 new)" in res.output
    res = runner.invoke(app, ["pending", "--user", "ann", "--json", *common])
    turns = json_out(res.stdout)
    assert [(t["speaker"], t["text"]) for t in turns] == [("user", "I adopted a cat")]
    res = runner.invoke(app, ["add", "-", "--text", "x", "--user", "ann", *common], input="[]")
    assert isinstance(res.exception, UserInputError) and "not both" in str(res.exception)
    res = runner.invoke(app, ["add", "--text", "  ", "--user", "ann", *common])
    assert isinstance(res.exception, InvalidMessageError)
