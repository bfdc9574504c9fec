"""System helpers and the runner's pure selection logic, with small in-test fakes."""

from __future__ import annotations

import numpy as np
import pytest
from hymem.backfill.locomo import parse_locomo
from hymem.core.errors import ConfigError, UserInputError
from hymem.core.types import RoleUsage, Usage
from hymem.evaluation.baselines import top_k_indices
from hymem.evaluation.lineup import build_systems
from hymem.evaluation.manifest import check_resumable
from hymem.evaluation.questions import eligible_questions, select_conversations
from hymem.evaluation.systems import ALL_SYSTEMS, to_dia_id, usage_split

RAW = [
    {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
        },
        "qa": [
            {"question": "q0", "answer": "a", "evidence": ["D1:1"], "category": 4},
            {"question": "q1", "evidence": ["D1:1"], "category": 5, "adversarial_answer": "x"},
            {"question": "q2", "answer": 2022, "evidence": [], "category": 2},
            {"question": "q3", "answer": "b", "evidence": ["D1:1"], "category": 1},
        ],
    }
]


def test_dia_id_mapping() -> None:
    assert to_dia_id("D12:3") == "D12:3"
    assert to_dia_id("conv-26:D1:3") == "D1:3"
    assert to_dia_id("turn-xyz") == "turn-xyz"


def test_top_k_indices_best_first_and_stable() -> None:
    assert top_k_indices(np.array([0.1, 0.9, 0.5, 0.9]), 3) == [1, 3, 2]
    assert top_k_indices(np.array([0.2]), 5) == [0]
    assert top_k_indices(np.array([]), 3) == []


def test_build_systems_by_name() -> None:
    systems = build_systems(["hymem", "naive-rag-k5", "no-reflection"])
    assert [s.name for s in systems] == ["hymem", "naive-rag-k5", "no-reflection"]
    assert systems[2].max_iterations == 0
    assert len(build_systems(ALL_SYSTEMS)) == 8
    with pytest.raises(UserInputError, match="naive-rag-k0"):
        build_systems(["hymem", "naive-rag-k0"])
    with pytest.raises(UserInputError, match="naive-rag-k1001"):
        build_systems(["naive-rag-k1001"])
    with pytest.raises(UserInputError, match="naive-rag-k07"):
        build_systems(["naive-rag-k07"])


def test_naive_rag_takes_any_k_so_it_can_match_hymems_tokens() -> None:
    systems = build_systems(["naive-rag-k7", "naive-rag-k150"])
    assert [(s.name, s.k) for s in systems] == [("naive-rag-k7", 7), ("naive-rag-k150", 150)]
    with pytest.raises(UserInputError):
        build_systems([])


def test_usage_split_light_deep_reflect() -> None:
    u = Usage()
    u.add("light_answer", RoleUsage(calls=2, prompt_tokens=10, completion_tokens=1))
    u.add("select", RoleUsage(calls=3, prompt_tokens=30))
    u.add("deep_answer", RoleUsage(calls=1, prompt_tokens=100, completion_tokens=5))
    u.add("reflect", RoleUsage(calls=2, prompt_tokens=4))
    s = usage_split(u)
    assert (s["light_calls"], s["deep_calls"], s["reflect_calls"], s["calls"]) == (2, 4, 2, 8)
    assert (s["light_tokens"], s["deep_tokens"], s["tokens"]) == (11, 135, 150)


def test_question_selection_and_conversation_filter() -> None:
    convs = parse_locomo(RAW)
    assert [i for i, _ in eligible_questions(convs[0], adversarial=False, limit=None)] == [0, 2, 3]
    assert [i for i, _ in eligible_questions(convs[0], adversarial=True, limit=2)] == [0, 1]
    assert convs[0].qa[2].answer == "2022"
    assert select_conversations(convs, []) == convs
    with pytest.raises(UserInputError, match="conv-99"):
        select_conversations(convs, ["conv-99"])


def test_resume_refused_when_settings_changed() -> None:
    base = {
        "config": {"llm": "extractive", "llm_base_url": None},
        "dataset_sha256": "a",
        "sleep": False,
        "judge": None,
        "embedder": "hashing-256",
    }
    check_resumable(base, {**base, "config": {"llm": "extractive", "llm_base_url": "x"}})
    with pytest.raises(ConfigError, match="config"):
        check_resumable(base, {**base, "config": {"llm": "openai:m"}})
    with pytest.raises(ConfigError, match="embedder"):
        check_resumable(base, {**base, "embedder": "all-MiniLM-L6-v2"})


def test_judge_config_swaps_only_the_model_and_rejects_bad_specs() -> None:
    from hymem.core.config import MemoryConfig
    from hymem.evaluation.runner import judge_config

    cfg = MemoryConfig.defaults(embedder="hashing", llm_base_url="http://127.0.0.1:1/v1")
    judge = judge_config(cfg, "openai:judge-model")
    assert (judge.llm, judge.embedder, judge.llm_base_url) == (
        "openai:judge-model",
        "hashing",
        "http://127.0.0.1:1/v1",
    )
    with pytest.raises(ConfigError, match="--judge"):
        judge_config(cfg, "gpt-4")


def test_a_local_judge_gets_the_local_deadline_unless_the_run_set_one() -> None:
    """Copying every field marked the default 60 s deadline as chosen, so a local judge queued
    behind the run's own model calls gave up after 60 s ("no free request slot")."""
    from hymem.core.config import MemoryConfig
    from hymem.evaluation.runner import judge_config
    from hymem.llm import LOCAL_TIMEOUT_S, local_deadline

    judge = judge_config(MemoryConfig.defaults(embedder="hashing"), "local")
    assert local_deadline(judge).llm_timeout_s == LOCAL_TIMEOUT_S
    chosen = judge_config(MemoryConfig.defaults(embedder="hashing", llm_timeout_s=90), "local")
    assert local_deadline(chosen).llm_timeout_s == 90


def test_a_run_resumes_across_a_setting_added_at_its_default() -> None:
    from hymem.core.config import MemoryConfig
    from hymem.evaluation.manifest import check_resumable

    cfg = MemoryConfig.defaults().model_dump(mode="json")
    old = {"config": {k: v for k, v in cfg.items() if k != "retry_window_s"}}
    check_resumable(old, {"config": cfg})  # added by an upgrade, at its default: fine
    with pytest.raises(ConfigError, match="config"):
        check_resumable(old, {"config": {**cfg, "retry_window_s": 5.0}})


def test_a_per_category_sample_takes_the_first_of_each_category() -> None:
    cats = [1, 1, 2, 4, 1, 4, 3, 5, 2]
    raw = [{**RAW[0], "qa": [_qa(i, c) for i, c in enumerate(cats)]}]
    conv = parse_locomo(raw)[0]
    picked = eligible_questions(conv, adversarial=False, limit=None, per_category=1)
    assert [i for i, _ in picked] == [0, 2, 3, 6]
    two = eligible_questions(conv, adversarial=True, limit=None, per_category=2)
    assert [i for i, _ in two] == [0, 1, 2, 3, 5, 6, 7, 8]
    assert [i for i, _ in eligible_questions(conv, adversarial=False, limit=3, per_category=1)] == [
        0,
        2,
        3,
    ]


def _qa(i: int, category: int) -> dict[str, object]:
    if category == 5:
        return {"question": f"q{i}", "evidence": [], "category": 5, "adversarial_answer": "x"}
    return {"question": f"q{i}", "answer": "a", "evidence": ["D1:1"], "category": category}
