"""The LLM layer: `build_roles(config, embedder)` picks the implementation of every role.

    "extractive"       ExtractiveRoles(embedder)     no model, deterministic, labelled as such
    "openai:MODEL"     PromptedRoles(OpenAIBackend)  any OpenAI-compatible server
    "hf:MODEL_OR_PATH" PromptedRoles(HFBackend)      a local transformers chat model

Backends load lazily: building roles is cheap and never touches the network or a model file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hymem.config import MemoryConfig
from hymem.errors import ConfigError
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import Role, RoleResult, Roles
from hymem.llm.tokens import count_tokens

if TYPE_CHECKING:
    from hymem.embedders import Embedder


def build_roles(config: MemoryConfig, embedder: Embedder) -> Roles:
    """The roles for `config.llm`; ConfigError on an unknown spec."""
    spec = config.llm.strip()
    if spec == "extractive":
        from hymem.llm.extractive.backend import ExtractiveRoles

        return ExtractiveRoles(embedder)
    kind, _, name = spec.partition(":")
    if not name:
        raise ConfigError(f"llm spec {spec!r} names no model")
    from hymem.llm.prompted import PromptedRoles

    if kind == "openai":
        from hymem.llm.providers.openai import OpenAIBackend

        return PromptedRoles(OpenAIBackend.from_config(config), config=config)
    if kind == "hf":
        from hymem.llm.providers.hf import HFBackend

        return PromptedRoles(HFBackend(name), config=config)
    raise ConfigError(f"unknown llm spec {spec!r}: use 'extractive', 'openai:MODEL' or 'hf:PATH'")


__all__ = ["Role", "RoleResult", "Roles", "build_roles", "count_tokens", "map_concurrent"]
