"""Knobs that used to be constants in code: defaults, bounds, and HYMEM_* overrides."""

from __future__ import annotations

import pytest
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError
from hymem.llm.extractive.scoring import DEFAULT_CACHE_ITEMS

TUNABLES = {
    "ingest_cache_items": 50_000,
    "search_depth_factor": 2,
    "search_min_candidates": 20,
    "search_threads": 4,
    "extractive_cache_items": DEFAULT_CACHE_ITEMS,
}


@pytest.mark.parametrize(("name", "default"), TUNABLES.items())
def test_tunable_defaults_env_override_and_bounds(
    name: str, default: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert getattr(MemoryConfig.defaults(), name) == default
    monkeypatch.setenv(f"HYMEM_{name.upper()}", "7")
    assert getattr(MemoryConfig(), name) == 7
    assert getattr(MemoryConfig.defaults(), name) == default  # defaults() ignores the env
    with pytest.raises(ConfigError):
        MemoryConfig.defaults(**{name: 0})


def test_an_updated_config_keeps_unset_defaults_unset() -> None:
    """`Memory(path, config=MemoryConfig(...), llm="local")` copied every field as if chosen,
    so the local model kept the 60 s remote deadline instead of the local one."""
    from hymem.api.memory_args import with_overrides
    from hymem.llm import LOCAL_TIMEOUT_S, local_deadline

    base = MemoryConfig.defaults(buffer_tokens=256)
    local = with_overrides(base, llm="local", embedder="hashing")
    assert (local.llm, local.embedder, local.buffer_tokens) == ("local", "hashing", 256)
    assert local_deadline(local).llm_timeout_s == LOCAL_TIMEOUT_S
    chosen = with_overrides(MemoryConfig.defaults(llm_timeout_s=90), llm="local", embedder=None)
    assert local_deadline(chosen).llm_timeout_s == 90
    with pytest.raises(ConfigError):
        base.updated(k=10_000)  # still validated as a whole: k over max_k
