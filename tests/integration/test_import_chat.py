"""`hymem import-chat` and `Memory.import_chat` on real LanceDB and Tantivy: each format's
export becomes the user's searchable turns, a re-import stores nothing twice, a bad file stores
nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hymem.cli import app
from hymem.core.errors import UserInputError
from typer.testing import CliRunner

from tests.backfill_job import open_memory
from tests.chat_exports import chatgpt_export, claude_export, jsonl_export

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("fmt", "write", "query", "expect", "turns"),
    [
        ("chatgpt", chatgpt_export, "sourdough starter name", "Clint", 5),
        ("claude", claude_export, "tomatoes balcony", "Ruby", 3),
        ("jsonl", jsonl_export, "bike colour", "blue", 2),
    ],
)
def test_an_export_becomes_searchable_turns_and_a_reimport_stores_nothing_twice(
    tmp_path: Path, fmt: str, write: object, query: str, expect: str, turns: int
) -> None:
    source = write(tmp_path / "export")  # type: ignore[operator]  # one of the writers above
    with open_memory(str(tmp_path / "m")) as mem:
        first = mem.import_chat(source, user_id="ann", format=fmt)
        assert first.messages == turns and first.new_turns == turns and first.pending == 0
        hits = mem.search(query, user_id="ann")
        assert hits and any(expect in h.text for h in hits), [h.text for h in hits]
        again = mem.import_chat(source, user_id="ann", format=fmt)
        assert again.new_turns == 0
        assert mem.stats(user_id="ann")["turns"] == turns


def test_a_bad_file_stores_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[{"id": "c", "mapping": {}}, \xff]')
    with open_memory(str(tmp_path / "m")) as mem:
        with pytest.raises(UserInputError, match="not UTF-8"):
            mem.import_chat(bad, user_id="ann", format="chatgpt")
        assert mem.stats()["turns"] == 0


def test_the_cli_imports_and_reports_what_it_skipped(tmp_path: Path) -> None:
    source = chatgpt_export(tmp_path / "conversations.json")
    args = ["import-chat", str(source), "--user", "ann", "--format", "chatgpt"]
    args += ["--store", str(tmp_path / "m"), "--embedder", "hashing"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert report["conversations"] == 2 and report["new_turns"] == 5
    assert report["skipped"]["other_branch"] == 2
