"""The reflective path with a real model: the `local` extra's SmolLM2-135M-Instruct, in-process.

A short history is written by the model summariser, then asks take the light path and the
escalated one (select, deep answer, reflect), a sleep has the model's `update` role decide a
changed fact, and the backend's own promises (grammar-constrained ids, the shared model, the
deadline, the context window) are held. The assertions are on what the model's output did to
the store and the answer, never on its words: a 135M model's words are poor, its effects must
still be consistent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig
from hymem.core.errors import LLMContextOverflowError, LLMUnavailable
from hymem.core.types import AddResult
from hymem.llm import build_roles
from hymem.llm.providers.gguf_models import DEFAULT_LOCAL_MODEL
from hymem.llm.providers.llamacpp import LlamaCppBackend
from hymem.llm.roles import ContextItem, SegmentInput

pytestmark = pytest.mark.integration

USER = "alice"
HISTORY = [
    ("2023-05-08T13:56:00", "user", "Hi! I'm Alice. I adopted a cat called Luna yesterday."),
    ("2023-05-08T13:57:00", "assistant", "Congratulations on adopting Luna!"),
    ("2023-05-08T13:58:00", "user", "I live in Paris and I work as a nurse at a hospital."),
    ("2023-05-08T13:59:00", "assistant", "Nursing in Paris sounds rewarding."),
]
LATER = [
    ("2023-09-02T10:00:00", "user", "Big news: I moved to Berlin last week for a new job."),
    ("2023-09-02T10:01:00", "assistant", "Good luck settling in to Berlin!"),
]


def _config(**over: object) -> MemoryConfig:
    values: dict[str, object] = {
        "llm": "local",
        "embedder": "hashing",
        "llm_max_tokens": 384,
        "llm_timeout_s": 240.0,
        "llm_repair_attempts": 1,
        "llm_context_tokens": 4096,
        "llm_threads": 1,
    }
    values.update(over)
    return MemoryConfig.defaults(**values)


def _add(mem: Memory, turns: list[tuple[str, str, str]]) -> None:
    for stamp, role, content in turns:
        mem.add([{"role": role, "content": content}], user_id=USER, timestamp=stamp)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, AddResult]]:
    """One store whose history the model summarised (module-wide: model time is the cost).
    Every newer memory is queued against every older one in sleep, whatever the embedder's
    similarity, so the update role is asked."""
    config = _config(sleep_similarity_floor=-1.0)
    mem = Memory(str(tmp_path_factory.mktemp("local-model")), config=config)
    _add(mem, HISTORY)
    result = mem.flush(user_id=USER)
    yield mem, result
    mem.close()


def test_the_model_summariser_writes_searchable_memories(
    written: tuple[Memory, AddResult],
) -> None:
    mem, result = written
    assert result.backend == "local"
    assert result.pending == 0 and result.error is None
    items = mem.get_all(user_id=USER).items
    assert items, "the model's summaries were not stored"
    assert result.summaries_written
    # every summary is the model's ("summary") or a recorded extractive fallback
    origins = {it.origin for it in items}  # type: ignore[union-attr]
    assert origins <= {"summary", "fallback", "consolidated"}
    if "fallback" in origins:
        assert result.summarise_fallbacks
    hits = mem.search("Luna the cat", user_id=USER, k=3)
    assert hits


def test_a_light_ask_answers_from_summaries_without_escalating(
    written: tuple[Memory, AddResult],
) -> None:
    mem, _ = written
    answer = mem.ask("What is the name of Alice's cat?", user_id=USER, depth="light")
    assert answer.path == "light" and not answer.escalated
    assert answer.backend == "local"
    assert answer.usage.roles["light_answer"].calls >= 1
    assert answer.fallback is None  # the model answered; grammar kept its reply valid
    assert answer.evidence


def test_an_escalated_ask_selects_reads_raw_dialogue_and_reflects(
    written: tuple[Memory, AddResult],
) -> None:
    mem, _ = written
    answer = mem.ask(
        "Where does Alice live and what is her job?", user_id=USER, depth="deep", max_iterations=1
    )
    assert answer.path == "deep" and answer.escalated
    assert answer.escalation_reason == "forced"
    roles = answer.usage.roles
    assert roles["select"].calls >= 1
    assert roles["deep_answer"].calls >= 1
    assert roles["reflect"].calls >= 1
    assert answer.iterations >= 1
    assert answer.text.strip()
    # a fallback is allowed only when named, and then the answer is never complete
    if answer.fallback is not None:
        assert not answer.complete


def test_a_changed_fact_is_decided_by_the_update_role_and_applied(
    written: tuple[Memory, AddResult],
) -> None:
    """Last of the module's tests on the shared store: it changes the store."""
    mem, _ = written
    _add(mem, LATER)
    mem.flush(user_id=USER)
    before = {it.id for it in mem.get_all(user_id=USER).items}
    report = mem.sleep(user_id=USER)
    after = {it.id for it in mem.get_all(user_id=USER).items}
    assert report.backend == "local"
    assert report.asked >= 1 and report.model_calls >= 1
    assert report.failed == 0
    decided = sum(report.decisions.values())
    assert decided >= 1
    # what the model decided is what was applied: an update makes a new version, a deletion
    # ends one; "ignore" and a rejected merge change nothing. A segment the write path left
    # to the extractive summariser is summarised by the model again, which retires its
    # fallback summaries
    applied = report.new_versions + report.deleted + report.superseded
    changed = applied + report.resummarised.retired
    assert (before != after) == (changed > 0)
    assert (report.decisions["update"] > 0) == (report.new_versions > 0)
    if report.decisions["update"] == report.decisions["delete"] == 0:
        assert applied == 0


def test_select_can_only_name_candidates_it_was_shown() -> None:
    roles = build_roles(_config(), embedder=None)  # type: ignore[arg-type]
    try:
        candidates = [
            ContextItem(id=f"mem-{i}", text=text, time_start=datetime(2023, 5, 8))
            for i, text in enumerate(
                ["Alice adopted a cat called Luna.", "Alice works as a nurse.", "It rained."]
            )
        ]
        result = roles.select_events("What is Alice's cat called?", candidates)
        assert not result.fallback
        assert set(result.output.ids) <= {c.id for c in candidates}
        assert not any("unknown" in note for note in result.notes)
        summary = roles.summarise(
            [
                SegmentInput(
                    segment_id="seg-7",
                    lines=["[2023-05-08 13:56] Alice: I adopted a cat called Luna yesterday."],
                    session_time=datetime(2023, 5, 8, 13, 56),
                )
            ]
        )
        assert [s.segment_id for s in summary.output.segments] == ["seg-7"]
    finally:
        roles.close()


def test_one_model_is_shared_by_every_backend_naming_it() -> None:
    first = LlamaCppBackend("local", threads=1, context_tokens=4096)
    second = LlamaCppBackend("local", threads=1, context_tokens=4096)
    try:
        assert first.slots is second.slots
        assert first.count_tokens("Alice adopted a cat.") > 0
    finally:
        first.close()
    assert second.count_tokens("still loaded for the other user") > 0
    second.close()
    with pytest.raises(LLMUnavailable):
        second.complete(
            [{"role": "user", "content": "hi"}],
            role="judge",
            json_mode=True,
            max_tokens=8,
            temperature=0.0,
            timeout_s=5.0,
        )


def test_a_prompt_over_the_context_window_is_a_typed_overflow() -> None:
    backend = LlamaCppBackend("local", threads=1, context_tokens=512)
    try:
        with pytest.raises(LLMContextOverflowError):
            backend.complete(
                [{"role": "user", "content": "Alice adopted a cat. " * 400}],
                role="deep_answer",
                json_mode=True,
                max_tokens=16,
                temperature=0.0,
                timeout_s=60.0,
            )
    finally:
        backend.close()


def test_generation_stops_at_the_deadline() -> None:
    backend = LlamaCppBackend("local", threads=1, context_tokens=2048)
    try:
        backend.count_tokens("load the model first")
        with pytest.raises(LLMUnavailable, match="timed out"):
            backend.complete(
                [{"role": "user", "content": "Write a long story about a cat."}],
                role="deep_answer",
                json_mode=False,
                max_tokens=4000,
                temperature=0.0,
                timeout_s=0.5,
            )
    finally:
        backend.close()


def test_the_packaged_model_is_the_pinned_file() -> None:
    path = DEFAULT_LOCAL_MODEL.path()
    assert path.name == DEFAULT_LOCAL_MODEL.filename
    assert path.stat().st_size > 50_000_000  # the weights are inside the package


def test_the_cli_answers_with_the_local_model(tmp_path: Path) -> None:
    from hymem.cli.app import app
    from typer.testing import CliRunner

    store = str(tmp_path / "mem")
    common = ["--store", store, "--llm", "local", "--embedder", "hashing"]
    runner = CliRunner()
    # written extractively (the model summariser has its own tests), asked with the model
    written_by = ["--store", store, "--llm", "extractive", "--embedder", "hashing"]
    added = runner.invoke(
        app, ["add", "-u", USER, "--text", "I adopted a cat called Luna.", "--flush", *written_by]
    )
    assert added.exit_code == 0, added.output
    asked = runner.invoke(
        app,
        ["ask", "-u", USER, "What is my cat called?", "--depth", "light", "--json", *common],
        env={"HYMEM_LLM_MAX_TOKENS": "256", "HYMEM_LLM_THREADS": "1"},
    )
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.output)
    assert answer["backend"] == "local" and answer["path"] == "light"
    assert answer["usage"]["roles"]["light_answer"]["calls"] >= 1
