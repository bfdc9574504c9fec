"""Issue 49: frictions a new user hit on the command line, each as that user met it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EMB = ["--embedder", "hashing:64"]
LATIN1 = '[{"speaker": "Ann", "text": "café"}]'.encode("latin-1")


def _cli(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`hymem ARGS` in a fresh interpreter: what a user's shell runs."""
    code = "import sys; from hymem.cli import main; sys.argv = ['hymem', *sys.argv[1:]]; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        timeout=120,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("hymem: error:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- 1: a file that is not UTF-8 -----------------------------------------------------------


def test_add_refuses_a_latin1_file_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "latin1.json"
    source.write_bytes(LATIN1)
    done = _cli("add", str(source), "-u", "x", "-s", str(tmp_path / "m"), *EMB)
    line = _one_error_line(done)
    assert f"{source}: not UTF-8 (byte 32" in line


def test_add_refuses_latin1_on_stdin_instead_of_storing_a_replacement(tmp_path: Path) -> None:
    done = _cli("add", "-u", "x", "-s", str(tmp_path / "m"), *EMB, stdin=LATIN1)
    assert "stdin: not UTF-8" in _one_error_line(done)
    assert not (tmp_path / "m").exists()  # refused before any memory was opened


# --- 9: simple mistakes are reported before anything heavy loads ---------------------------

_HEAVY = ("torch", "sentence_transformers", "transformers")
_REPORT_HEAVY = (
    "import atexit, sys; atexit.register(lambda: print('heavy:', "
    f"[m for m in {_HEAVY!r} if m in sys.modules], file=sys.stderr)); "
)


def _cli_reporting_heavy(*args: str) -> subprocess.CompletedProcess[str]:
    """`_cli`, and at exit the heavy modules the command had imported, on stderr."""
    code = _REPORT_HEAVY + "from hymem.cli import main; sys.argv = ['hymem', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "", "-u", "big"], "question must be a non-empty"),
        (["context", " ", "-u", "big"], "question must be a non-empty"),
        (["search", "x", "-u", "x", "-k", "0"], "k must be a positive integer, got 0"),
        (["ask", "why?", "-u", "big", "--depth", "far"], "unknown depth 'far'"),
    ],
)
def test_a_bad_argument_is_refused_before_the_memory_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    from hymem.cli import app, read_cmds, store_cmds
    from typer.testing import CliRunner

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the memory was opened before the arguments were checked")

    monkeypatch.setattr(read_cmds, "open_for_ask", refuse)
    monkeypatch.setattr(read_cmds, "open_memory", refuse)
    monkeypatch.setattr(store_cmds, "open_memory", refuse)
    res = CliRunner().invoke(app, [*args, "-s", str(tmp_path / "m")])
    assert message in str(res.exception), res.exception


def test_bad_arguments_fail_fast_without_loading_the_default_embedder(tmp_path: Path) -> None:
    store = str(tmp_path / "m")  # the default (MiniLM) embedder: no --embedder
    for args in (["ask", "", "-u", "big"], ["search", "x", "-u", "x", "-k", "0"]):
        done = _cli_reporting_heavy(*args, "-s", store)
        assert "hymem: error:" in _one_error_line(done)
        assert "heavy: []" in done.stderr, done.stderr


@pytest.mark.parametrize(
    "code",
    [
        "from hymem.cli import main; sys.argv = ['hymem', '--version']; main()",
        "import hymem.client",
    ],
)
def test_version_and_the_client_import_no_model_library(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _REPORT_HEAVY + code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stderr, done.stderr


# --- 16: error wording ---------------------------------------------------------------------


def test_ask_names_its_parameter_question(tmp_path: Path) -> None:
    from hymem import Memory, MemoryConfig, UserInputError

    with Memory(tmp_path / "m", config=MemoryConfig(embedder="hashing:64"), create=True) as mem:
        for call in (mem.ask, mem.context):
            with pytest.raises(UserInputError, match=r"^question must be a non-empty"):
                call("", user_id="u")
        with pytest.raises(UserInputError, match=r"^query must be a non-empty"):
            mem.search("", user_id="u")


def test_a_second_writer_in_the_same_process_is_told_it_is_this_process(tmp_path: Path) -> None:
    from hymem import Memory, MemoryConfig, StoreLockedError

    config = MemoryConfig(embedder="hashing:64")
    with Memory(tmp_path / "m", config=config, create=True):
        with pytest.raises(StoreLockedError, match="already open for writing in this process"):
            Memory(tmp_path / "m", config=config)
        with Memory(tmp_path / "m", config=config, read_only=True) as reader:
            assert reader.stats()
    with Memory(tmp_path / "m", config=config):  # closed: free again
        pass


def test_cli_errors_give_the_cli_way_not_memory_arguments(tmp_path: Path) -> None:
    from hymem import Memory, MemoryConfig

    missing = tmp_path / "no" / "such" / "m"
    line = _one_error_line(_cli("add", "--text", "hi", "-u", "u", "-s", str(missing), *EMB))
    assert f"(create it first: mkdir -p {missing.parent})" in line and "create=True" not in line

    line = _one_error_line(_cli("search", "hi", "-u", "u", "-s", str(tmp_path / "none"), *EMB))
    assert f"(`hymem add --store {tmp_path / 'none'}`)" in line and "Memory(" not in line

    with Memory(tmp_path / "m", config=MemoryConfig(embedder="hashing:64"), create=True):
        line = _one_error_line(_cli("flush", "-u", "u", "-s", str(tmp_path / "m"), *EMB))
    assert "being written by another process; close the other writer" in line
    assert "read_only=True" not in line


def test_s3_without_credentials_is_a_config_error_not_a_retry(
    s3_store: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hymem import ConfigError, Memory, MemoryConfig, StoreUnavailableError

    from tests.fixtures_s3 import S3Target

    assert isinstance(s3_store, S3Target)
    for name in [n for n in os.environ if n.startswith("AWS_") and n != "AWS_CA_BUNDLE"]:
        monkeypatch.delenv(name)
    options = {k: v for k, v in s3_store.storage_options.items() if "key" not in k}
    with pytest.raises(ConfigError, match="no credentials for the object store") as caught:
        Memory(s3_store.uri, config=MemoryConfig(embedder="hashing:64"), storage_options=options)
    assert not isinstance(caught.value, StoreUnavailableError)
    assert "retry later" not in str(caught.value)


# --- 13: profile after an add says its turn is pending ------------------------------------


def test_profile_right_after_an_add_names_the_pending_turn(tmp_path: Path) -> None:
    from hymem.cli import app
    from typer.testing import CliRunner

    runner, store = CliRunner(), str(tmp_path / "m")
    text = "I live in Lisbon and I have two cats."
    res = runner.invoke(app, ["add", "-u", "ann", "--text", text, "-s", store, *EMB])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["profile", "-u", "ann", "-s", store, *EMB])
    assert res.exit_code == 0, res.output
    assert "no facts recognised for 'ann' yet" in res.stdout
    err = " ".join(res.stderr.split())
    assert "1 turn of ann is pending: not searchable until flushed" in err
    assert "`hymem flush -u ann` stores it now" in err


# --- 14: audit of a fresh ingest --------------------------------------------------------------


def test_audit_of_a_fresh_ingest_with_a_duplicate_exits_0_and_piped_headers_are_whole(
    tmp_path: Path,
) -> None:
    from hymem import Memory, MemoryConfig

    config = MemoryConfig(embedder="hashing:64", consolidate_on_write=False)
    with Memory(tmp_path / "m", config=config, create=True) as mem:
        for session in ("s1", "s2"):  # the same news twice: a duplicate cluster, nothing broken
            turn = {"speaker": "Melanie", "text": "We adopted a puppy! His name is Max."}
            mem.add([turn], user_id="ann", session_id=session)
            mem.flush(user_id="ann")
        ann = mem.audit(user_id="ann").users[0]
    assert ann.duplicate_clusters and ann.healthy

    done = _cli("audit", "-s", str(tmp_path / "m"), *EMB, env={"COLUMNS": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    for header in ("mean support", "unsupported", "duplicate clusters", "ended but served"):
        assert header in done.stdout, done.stdout
    assert "…" not in done.stdout
    shown = _cli("audit", "--help", env={"COLUMNS": ""})  # help keeps a readable width
    assert shown.returncode == 0 and max(map(len, shown.stdout.splitlines())) <= 80


# --- 8: Ctrl-C during an evaluation ------------------------------------------------------------


@pytest.mark.parametrize(
    ("benchmark", "module", "runner_name"),
    [
        ("locomo", "hymem.evaluation.runner", "run_locomo"),
        ("longmemeval", "hymem.evaluation.longmemeval.runner", "run_longmemeval"),
    ],
)
def test_ctrl_c_during_eval_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, benchmark: str, module: str, runner_name: str
) -> None:
    import importlib

    from hymem.cli import app
    from typer.testing import CliRunner

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(module), runner_name, interrupted)
    out = tmp_path / "run"
    data = tmp_path / "data.json"
    data.write_text("[]", encoding="utf-8")
    res = CliRunner().invoke(app, ["eval", benchmark, str(data), "--out", str(out), *EMB])
    assert res.exit_code == 130, res.output
    said = " ".join(res.stderr.split())
    assert f"interrupted; rerun the same command to resume (with --out {out}" in said
    assert "Aborted" not in res.output


# --- 4: webhooks from short-lived commands -------------------------------------------------------


def test_cli_add_and_flush_deliver_their_webhook_events_before_exiting(tmp_path: Path) -> None:
    import json

    from hymem.ops.webhooks.outbox import Outbox

    from tests.webhook_receiver import Receiver

    store = tmp_path / "m"
    with Receiver() as rx:
        hook = {"url": rx.url, "secret": "s" * 32, "name": "rx", "allow_private_targets": True}
        env = {"HYMEM_WEBHOOKS": json.dumps([hook])}
        text = ["--text", "I moved to Lisbon in March."]
        done = _cli("add", "-u", "ann", *text, "--flush", "-s", str(store), *EMB, env=env)
        assert done.returncode == 0, done.stderr
        assert len(rx.delivered()) == 1  # before the command exited, not at a later open
        done = _cli("add", "-u", "ann", "--text", "Ana is my sister.", "-s", str(store), *EMB)
        assert done.returncode == 0, done.stderr
        done = _cli("flush", "-u", "ann", "-s", str(store), *EMB, env=env)
        assert done.returncode == 0, done.stderr
        assert len(rx.delivered()) == 2
    box = Outbox(store / "webhooks" / "outbox.sqlite3")
    try:
        (status,) = box.status()
    finally:
        box.close()
    assert (status.pending, status.delivered) == (0, 2)


def test_a_cli_command_whose_receiver_is_down_says_who_delivers_later(tmp_path: Path) -> None:
    import json

    from tests.webhook_receiver import Receiver

    with Receiver(mode="fail") as rx:
        hook = {"url": rx.url, "secret": "s" * 32, "name": "rx", "allow_private_targets": True}
        env = {"HYMEM_WEBHOOKS": json.dumps([hook]), "HYMEM_WEBHOOK_DRAIN_S": "1"}
        args = ["add", "-u", "ann", "--text", "I moved to Lisbon.", "--flush"]
        started = time.monotonic()
        done = _cli(*args, "-s", str(tmp_path / "m"), *EMB, env=env)
        assert done.returncode == 0, done.stderr
        assert rx.received  # it was tried before the command exited
    assert "webhook.pending_at_close" in done.stderr
    assert "the next process that opens this memory for writing" in done.stderr
    assert time.monotonic() - started < 60
