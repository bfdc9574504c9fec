"""`hymem search`, `hymem stats`, `hymem reindex` and `hymem optimize` on a real store folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app
from hymem.testing import embedder_of, store_of
from typer.testing import CliRunner

from tests.fixtures_store import commit_texts

pytestmark = pytest.mark.integration

EMB = ["--embedder", "hashing:64"]


def _json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing:64")) as mem:
        commit_texts(
            store_of(mem), embedder_of(mem), "alice", ["Alice adopted a cat", "Alice sings"]
        )
        commit_texts(store_of(mem), embedder_of(mem), "bob", ["Bob owns a cat"], segment_id="b")
    return tmp_path / "m"


def test_search_stats_reindex(folder: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["search", "cat's", "-u", "alice", "-s", str(folder), "--json", *EMB])
    assert res.exit_code == 0, res.output
    hits = _json_lines(res.output)
    assert hits[0]["text"] == "Alice adopted a cat" and {h["user_id"] for h in hits} == {"alice"}

    res = runner.invoke(app, ["stats", "-s", str(folder), "--json", *EMB])
    assert res.exit_code == 0, res.output
    stats = _json_lines(res.output)[-1]
    assert stats["counts"]["summaries"] == 3 and stats["users"] == 2
    assert stats["meta"]["embedder"] == "hashing-64"

    res = runner.invoke(app, ["reindex", "-s", str(folder), *EMB])
    assert res.exit_code == 0, res.output
    assert "indexed 3 summaries, 2 segments" in res.output


def test_optimize_compacts_and_builds_the_due_index(tmp_path: Path) -> None:
    config = MemoryConfig.defaults(embedder="hashing:64", vector_index_min_rows=256)
    with Memory(tmp_path / "m", config=config) as mem:
        for i in range(3):
            texts = [f"note {i} {j} about item{j}" for j in range(100)]
            commit_texts(store_of(mem), embedder_of(mem), "alice", texts, segment_id=f"g{i}")
        assert not store_of(mem).tables.vector_indexed("summaries")  # every user fits the cache
    res = CliRunner().invoke(
        app,
        ["optimize", "-s", str(tmp_path / "m"), "--embedder", "hashing:64"],
        env={"HYMEM_VECTOR_INDEX_MIN_ROWS": "256"},
    )
    assert res.exit_code == 0, res.output
    index = json.loads((tmp_path / "m" / "vector_index.json").read_text())
    assert index["summaries"]["trained_rows"] == 300


def test_search_rejects_bad_input(folder: Path) -> None:
    res = CliRunner().invoke(app, ["search", "  ", "-u", "alice", "-s", str(folder), *EMB])
    assert res.exit_code != 0
