"""`hymem add --metadata key=value --agent A` stores typed metadata; `hymem search --filter
JSON` (and --agent) returns only matching hits; a bad filter exits with the library's error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hymem.cli import app
from hymem.cli.meta_opts import parse_metadata
from typer.testing import CliRunner

pytestmark = pytest.mark.integration

EMB = ["--embedder", "hashing:64"]


def _add(runner: CliRunner, store: Path, text: str, *opts: str) -> None:
    msgs = json.dumps([{"speaker": "A", "text": text}])
    args = ["add", "-u", "u", "-s", str(store), "--json", *EMB, *opts]
    res = runner.invoke(app, args, input=msgs)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["flush", "-u", "u", "-s", str(store), *EMB])
    assert res.exit_code == 0, res.output


def test_add_with_metadata_then_search_with_a_filter(tmp_path: Path) -> None:
    runner, store = CliRunner(), tmp_path / "m"
    _add(
        runner,
        store,
        "Alice planted tomatoes in the garden.",
        "-m",
        "topic=garden",
        "-m",
        "year=2023",
        "--agent",
        "a1",
    )
    _add(
        runner, store, "Alice repaired the garden fence.", "-m", "topic=repairs", "-m", "year=2021"
    )
    base = ["search", "garden", "-u", "u", "-s", str(store), "--json", *EMB]
    hits = [json.loads(x) for x in runner.invoke(app, base).output.splitlines()]
    assert {h["metadata"]["topic"] for h in hits} == {"garden", "repairs"}
    res = runner.invoke(app, [*base, "--filter", '{"year": {"gte": 2022}}'])
    assert res.exit_code == 0, res.output
    hits = [json.loads(x) for x in res.output.splitlines()]
    assert hits and all(
        h["metadata"] == {"agent_id": "a1", "topic": "garden", "year": 2023} for h in hits
    )
    res = runner.invoke(app, [*base, "--agent", "a1"])
    assert {json.loads(x)["metadata"]["topic"] for x in res.output.splitlines()} == {"garden"}
    bad = runner.invoke(app, [*base, "--filter", '{"year": {"near": 1}}'])
    assert bad.exit_code != 0 and "unknown operator 'near'" in str(bad.exception)
    bad = runner.invoke(app, [*base, "--filter", "year > 1"])
    assert bad.exit_code != 0 and "--filter is not JSON" in str(bad.exception)


def test_metadata_values_keep_their_json_type() -> None:
    got = parse_metadata(["a=3", "b=2.5", "c=true", 'd="7"', "e=plain text", "f=[1]", "g="])
    assert got == {"a": 3, "b": 2.5, "c": True, "d": "7", "e": "plain text", "f": "[1]", "g": ""}
