"""Hardening, caller side: sizes, text and settings an adversarial caller passes end in a typed
`HymemError` with a message saying what to do, never an abort, a raw error or a stray folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import ConfigError, HymemError, StoreError, UserInputError
from hymem.llm.extractive import backend as extractive_backend
from hymem.read.reader import NO_ANSWER, NO_ANSWER_FLAG
from hymem.testing import embedder_of, searcher_of, store_of

from tests.fixtures_store import commit_texts
from tests.log_events import capture_events

pytestmark = pytest.mark.integration
HUGE = 10**9
SURROGATE = "u\ud800x"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing:64")) as m:
        commit_texts(
            store_of(m), embedder_of(m), "alice", ["Alice adopted a cat", "Alice sings jazz"]
        )
        yield m


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys; from hymem.cli import main; sys.argv = ['hymem', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        timeout=120,
    )


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "dense"])
def test_a_huge_k_is_refused_not_an_abort(mem: Memory, mode: str) -> None:
    with pytest.raises(UserInputError, match="max_k"):
        mem.search("cat", user_id="alice", k=HUGE, mode=mode)  # type: ignore[arg-type]
    with pytest.raises(UserInputError, match="max_k"):
        searcher_of(mem).search("cat", user_id="alice", k=HUGE, mode=mode)  # type: ignore[arg-type]
    assert mem.search("cat", user_id="alice", k=mem.config.max_k, mode=mode)  # type: ignore[arg-type]


@pytest.mark.parametrize("sizes", [{"k": HUGE}, {"N": HUGE, "depth": "deep"}, {"d": HUGE}])
def test_ask_sizes_are_bounded(mem: Memory, sizes: dict[str, object]) -> None:
    with pytest.raises(UserInputError, match="max_k"):
        mem.ask("what does alice sing?", user_id="alice", **sizes)  # type: ignore[arg-type]


def test_the_store_itself_never_sizes_a_tantivy_allocation_by_k(tmp_path: Path) -> None:
    """Before: Tantivy allocated a 10**9-slot heap and the process died of SIGABRT (rc 134).
    Run in a child process so that a regression fails this test instead of killing pytest."""
    script = f"""
from hymem import Memory, MemoryConfig
from hymem.indexes.protocol import RowScope
from hymem.testing import embedder_of, store_of
from tests.fixtures_store import commit_texts
with Memory({str(tmp_path / "m")!r}, config=MemoryConfig.defaults(embedder="hashing:64")) as m:
    store = store_of(m)
    commit_texts(store, embedder_of(m), "alice", ["Alice adopted a cat"])
    print(len(store.lexical_search(RowScope("alice"), "cat", {HUGE})))
    print(len(store.dense_search(RowScope("alice"), embedder_of(m).embed(["cat"])[0], {HUGE})))
"""
    res = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=Path.cwd()
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["1", "1"]


def test_cli_search_with_a_huge_k_exits_2_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    with Memory(folder, config=MemoryConfig.defaults(embedder="hashing:64")) as m:
        commit_texts(store_of(m), embedder_of(m), "alice", ["Alice adopted a cat"])
    res = _cli(
        "search",
        "cat",
        "-u",
        "alice",
        "-s",
        str(folder),
        "-k",
        str(HUGE),
        "--embedder",
        "hashing:64",
    )
    assert res.returncode == 2, res.stderr
    assert "max_k" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.search("cat", user_id=SURROGATE),
        lambda m: m.search("ca\ud800t", user_id="alice", mode="lexical"),
        lambda m: m.search("ca\ud800t", user_id="alice"),
        lambda m: m.ask("what\ud800?", user_id="alice"),
        lambda m: m.context("what\ud800?", user_id="alice"),
        lambda m: m.add([{"role": "user", "content": "hi"}], user_id="alice", session_id=SURROGATE),
        lambda m: m.add([{"role": "user", "content": "hi"}], user_id=SURROGATE),
    ],
)
def test_lone_surrogates_in_ids_and_queries_are_refused(mem: Memory, call: object) -> None:
    with pytest.raises(UserInputError, match="surrogate"):
        call(mem)  # type: ignore[operator]
    assert store_of(mem).counts("alice")["turns"] == 0  # nothing half-written


@pytest.mark.parametrize("bad", ["3", 2.5, -1, True, 10**6])
def test_max_iterations_must_be_a_small_int(mem: Memory, bad: object) -> None:
    with pytest.raises(UserInputError, match="max_iterations"):
        mem.ask("what does alice sing?", user_id="alice", max_iterations=bad)  # type: ignore[arg-type]


def test_bad_settings_are_config_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="llm"):
        Memory(tmp_path / "a", llm="bogus:xx", embedder="hashing")
    with pytest.raises(ConfigError, match="HYMEM_K"):
        MemoryConfig(k=-1)
    monkeypatch.setenv("HYMEM_K", "abc")
    with pytest.raises(ConfigError, match=r"HYMEM_K.*'abc'"):
        MemoryConfig()
    with pytest.raises(ConfigError, match="max_k"):
        MemoryConfig.defaults(k=5000)
    assert not (tmp_path / "a").exists()


def test_cli_with_a_bad_setting_exits_2_with_one_line(tmp_path: Path) -> None:
    res = _cli("stats", "-s", str(tmp_path / "m"), env={"HYMEM_K": "abc"})
    assert res.returncode == 2
    assert "HYMEM_K" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_unusable_store_paths(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="parent folder /proc/nope does not exist"):
        Memory("/proc/nope/x", embedder="hashing")
    with pytest.raises(StoreError, match="cannot open"):
        Memory("/proc/nope/x", embedder="hashing", create=True)
    with pytest.raises(UserInputError, match="control character"):
        Memory(tmp_path / "a\nb", embedder="hashing")
    assert list(tmp_path.iterdir()) == []  # no stray folder
    with pytest.raises(UserInputError):
        Memory(123, embedder="hashing")  # type: ignore[arg-type]


def test_an_overlong_question_is_refused(mem: Memory) -> None:
    long = "why " * (mem.config.max_query_chars // 4 + 1)
    for call in (mem.ask, mem.context):
        with pytest.raises(UserInputError, match="max_query_chars"):
            call(long, user_id="alice")
    with pytest.raises(UserInputError, match="max_query_chars"):
        mem.search(long, user_id="alice")


def test_the_extractive_rewrite_reads_the_question_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the question's term set was recomputed per word (16,000 words took 202 s)."""
    calls = []
    real = extractive_backend.question_terms

    def counting(question: str) -> list[str]:
        calls.append(1)
        return real(question)

    monkeypatch.setattr(extractive_backend, "question_terms", counting)
    question = " ".join(["where did caroline paint the sunset"] * 500) + "?"
    extractive_backend._rewrite_question(question, ["sunset"])
    assert len(calls) <= 2


def test_ask_on_an_empty_memory_says_it_cannot_answer(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", config=MemoryConfig.defaults(embedder="hashing:64")) as m:
        answer = m.ask("what did I paint last week?", user_id="nobody")
    assert answer.text == NO_ANSWER and NO_ANSWER_FLAG in answer.fallbacks
    assert not answer.complete


def test_a_read_only_ask_writes_no_trace_and_logs_no_failure(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    cfg = MemoryConfig.defaults(embedder="hashing:64")
    with Memory(folder, config=cfg) as m:
        commit_texts(store_of(m), embedder_of(m), "alice", ["Alice adopted a cat"])
    with Memory(folder, config=cfg, read_only=True) as reader, capture_events() as events:
        reader.ask("what did alice adopt?", user_id="alice")
        assert reader.traces(user_id="alice") == []
    assert not [e for e in events if e.get("event") == "ask.trace_failed"]
    assert [e for e in events if e.get("event") == "ask.trace"]  # still logged


def test_every_error_above_is_one_tree() -> None:
    for exc in (ConfigError, StoreError, UserInputError):
        assert issubclass(exc, HymemError)


def test_aware_datetime_extremes_are_user_errors(mem: Memory) -> None:
    """Before: OverflowError from converting an aware datetime.max to UTC."""
    from datetime import datetime, timedelta, timezone

    west, east = timezone(timedelta(hours=-5)), timezone(timedelta(hours=5))
    msg = [{"role": "user", "content": "hello"}]
    with pytest.raises(UserInputError, match="out of range"):
        mem.add(msg, user_id="alice", timestamp=datetime.max.replace(tzinfo=west))
    with pytest.raises(UserInputError, match="out of range"):
        mem.add([{**msg[0], "timestamp": datetime.min.replace(tzinfo=east)}], user_id="alice")
    with pytest.raises(UserInputError, match="out of range"):
        mem.search("cat", user_id="alice", since=datetime.max.replace(tzinfo=west))
    assert store_of(mem).counts("alice")["turns"] == 0
