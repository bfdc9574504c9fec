"""`hymem sleep / history / restore` end to end through typer (extractive backend, hashing
embedder: the commands are under test here, not the model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem.api.memory import Memory
from hymem.cli import app
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.testing import store_of
from typer.testing import CliRunner

from tests.fixtures_sleep import seed_store

pytestmark = pytest.mark.integration

DUP = "Caroline went to the LGBTQ support group on 7 May 2023."


def test_sleep_history_restore_commands(tmp_path: Path) -> None:
    store = tmp_path / "mem"
    emb = HashingEmbedder()
    with Memory(store, config=MemoryConfig.defaults(llm="extractive"), embedder=emb) as mem:
        sums = seed_store(store_of(mem), emb, "u", [DUP, "User lives in New York", DUP.lower()])
    common = ["--store", str(store), "--embedder", "hashing"]
    runner = CliRunner()

    dry = runner.invoke(app, ["sleep", *common, "--llm", "extractive", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "dry run" in dry.output and "planned changes" in dry.output
    assert not (store / "sleep" / "journal.jsonl").exists()

    res = runner.invoke(
        app, ["sleep", *common, "--llm", "extractive", "--user", "u", "--workers", "2"]
    )
    assert res.exit_code == 0, res.output
    assert "queues built" in res.output and "new versions" in res.output

    hist = runner.invoke(app, ["history", sums[0].id, "--user", "u", *common])
    assert hist.exit_code == 0, hist.output
    assert "superseded" in hist.output and "active" in hist.output

    back = runner.invoke(app, ["restore", sums[0].id, "--user", "u", *common])
    assert back.exit_code == 0, back.output
    with Memory(store, config=MemoryConfig.defaults(llm="extractive"), embedder=emb) as mem:
        assert store_of(mem).get_summaries("u", ids=[sums[0].id])[0].status.value == "active"

    bad = runner.invoke(app, ["restore", "no-such-id", "--user", "u", *common])
    assert bad.exit_code != 0
    zero = runner.invoke(app, ["sleep", *common, "--workers", "0"])
    assert zero.exit_code == 2  # rejected by the option's bounds
