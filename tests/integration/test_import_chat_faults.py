"""`Memory.import_chat` on real LanceDB and Tantivy: an import is all or nothing. A file that
fails anywhere, even in its last conversation or line, stores no turn; an import stopped part-way
and run again stores each turn exactly once, messages without ids included; and the same
message id in two conversations with other texts is refused rather than one of them dropped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hymem.core.errors import ChatExportError

from tests.backfill_job import open_memory
from tests.chat_exports import gpt_conversation, write_json, write_jsonl

pytestmark = pytest.mark.integration


def test_a_message_over_the_limit_in_a_later_conversation_stores_nothing(tmp_path: Path) -> None:
    convs = [
        gpt_conversation("c0", ["I keep bees.", "Nice.", "They are called Bumble."]),
        gpt_conversation("c1", ["x" * 70_000]),
    ]
    source = write_json(tmp_path / "conversations.json", convs)
    with open_memory(str(tmp_path / "m")) as mem:
        with pytest.raises(ChatExportError) as info:
            mem.import_chat(source, user_id="ann", format="chatgpt")
        assert mem.stats(user_id="ann")["turns"] == 0
    assert "conversation 1 ('c1')" in str(info.value) and "65536" in str(info.value)


def test_a_bad_timestamp_on_the_last_jsonl_line_stores_nothing(tmp_path: Path) -> None:
    rows = [
        {"conversation_id": "a", "id": "1", "role": "user", "text": "I keep bees."},
        {"conversation_id": "a", "id": "2", "role": "assistant", "text": "Nice."},
        {"conversation_id": "b", "id": "3", "role": "user", "text": "Bumble is the queen."},
        {"conversation_id": "b", "id": "4", "role": "user", "text": "bye", "timestamp": "soon"},
    ]
    source = write_jsonl(tmp_path / "chats.jsonl", rows)
    with open_memory(str(tmp_path / "m")) as mem:
        with pytest.raises(ChatExportError) as info:
            mem.import_chat(source, user_id="ann", format="jsonl")
        assert mem.stats(user_id="ann")["turns"] == 0
    assert "line 4: timestamp" in str(info.value)


def test_the_same_id_with_other_texts_in_two_conversations_stores_nothing(tmp_path: Path) -> None:
    c1 = gpt_conversation("c1", ["My dog is Rex.", "Hi Rex."])
    c2 = gpt_conversation("c1", ["My cat is Tom.", "Hi Tom."])  # the same message ids
    c2["id"] = "c2"
    source = write_json(tmp_path / "conversations.json", [c1, c2])
    with open_memory(str(tmp_path / "m")) as mem:
        with pytest.raises(ChatExportError, match="'c1-n0'"):
            mem.import_chat(source, user_id="ann", format="chatgpt")
        assert mem.stats(user_id="ann")["turns"] == 0


class Stop(Exception):
    """Stands for the process dying between two conversations of an import."""


@pytest.mark.parametrize("fmt", ["chatgpt", "jsonl"])
def test_an_import_stopped_part_way_and_run_again_stores_each_turn_once(
    tmp_path: Path, fmt: str
) -> None:
    if fmt == "chatgpt":  # messages without ids of their own: the reader gives them ids
        convs = [
            gpt_conversation(f"c{i}", [f"fact {i} a", f"fact {i} b"], ids=False) for i in range(3)
        ]
        source = write_json(tmp_path / "conversations.json", convs)
    else:
        rows = [{"conversation_id": f"c{i // 2}", "text": f"fact {i}"} for i in range(6)]
        source = write_jsonl(tmp_path / "chats.jsonl", rows)

    def stop_after_the_first(done: int, total: int) -> None:
        if done == 1:
            raise Stop

    with open_memory(str(tmp_path / "m")) as mem:
        with pytest.raises(Stop):
            mem.import_chat(source, user_id="ann", format=fmt, progress=stop_after_the_first)
        assert mem.stats(user_id="ann")["turns"] == 2  # the first conversation's
        again = mem.import_chat(source, user_id="ann", format=fmt)
        assert (again.messages, again.new_turns) == (6, 4)
        assert mem.stats(user_id="ann")["turns"] == 6
        assert mem.import_chat(source, user_id="ann", format=fmt).new_turns == 0
        assert mem.stats(user_id="ann")["turns"] == 6


def test_the_cli_refuses_a_bad_export_in_one_line(tmp_path: Path) -> None:
    conv = gpt_conversation("c1", ["hello"])
    conv["mapping"]["c1-n0"]["message"]["author"] = "user"
    source = write_json(tmp_path / "conversations.json", [conv])
    cmd = [sys.executable, "-m", "hymem.cli", "import-chat", str(source), "--user", "ann"]
    cmd += ["--format", "chatgpt", "--store", str(tmp_path / "m"), "--embedder", "hashing"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("hymem: error:")]
    assert len(error) == 1 and "conversation 0 ('c1')" in error[0] and "author" in error[0]
    assert "Traceback" not in done.stderr
