"""Issue #32 (4) and #31 (4): the Python blocks of docs/histories.md ("Bringing histories in")
run as written, in order, in one namespace, on the embedded defaults (extractive backend, the
real MiniLM embedder) in a fresh folder holding the files they name. (The block's second,
Ray backfill finds every user stored and starts no runtime; `test_backfill_ray` runs Ray.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.chat_exports import chatgpt_export
from tests.doc_blocks import DOCS, blocks

pytestmark = pytest.mark.integration


def test_every_block_of_the_section_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    chatgpt_export(tmp_path / "conversations.json")
    rows = [
        {"user_id": "carol", "session_id": "s1", "id": "c1", "role": "user", "text": "I row."},
        {"user_id": "dave", "session_id": "s1", "id": "d1", "role": "user", "text": "I ski."},
    ]
    (tmp_path / "chats.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    found = blocks("# Bringing histories in", page=DOCS / "histories.md")
    assert len(found) == 2
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    for i, block in enumerate(found):
        exec(compile(block, f"docs/histories.md block {i + 1}", "exec"), namespace)  # the test
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("5 {") and "other_branch" in printed[0]
    assert printed[1] == "['carol', 'dave', 'bob']"
