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
