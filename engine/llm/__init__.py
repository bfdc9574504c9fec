"""The LLM layer: `build_roles(config, embedder)` picks the implementation of every role.

    "extractive"       ExtractiveRoles(embedder)     no model, deterministic, labelled as such
    "openai:MODEL"     PromptedRoles(OpenAIBackend)  any OpenAI-compatible server
    "gguf:PATH"        PromptedRoles(LlamaCppBackend) a GGUF model run in-process (llama.cpp)
    "local"            PromptedRoles(LlamaCppBackend) the `local` extra's packaged GGUF model
    "hf:MODEL_OR_PATH" PromptedRoles(HFBackend)      a local transformers chat model

Backends load lazily: building roles is cheap and never touches the network or a model file.
`LazyRoles` defers even that to the first call, so opening a Memory builds no client at all.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from hymem.core.config import LLM_SPECS, MemoryConfig
from hymem.core.errors import ConfigError
from hymem.llm.pool import map_concurrent
from hymem.llm.roles import Role, RoleResult, Roles, RolesProvider
from hymem.llm.tokens import count_tokens

if TYPE_CHECKING:
    from hymem.embed.embedders import Embedder


def build_roles(config: MemoryConfig, embedder: Embedder) -> Roles:
    """The roles for `config.llm`; ConfigError on an unknown spec."""
    spec = config.llm.strip()
    if spec == "extractive":
        from hymem.llm.extractive.backend import ExtractiveRoles

        return ExtractiveRoles(embedder, cache_items=config.extractive_cache_items)
    from hymem.llm.prompted import PromptedRoles

    if spec == "local" or spec.startswith("gguf:"):
        from hymem.llm.providers.llamacpp import LlamaCppBackend

        local = LlamaCppBackend(
            spec, threads=config.llm_threads, context_tokens=config.llm_context_tokens
        )
        return PromptedRoles(local, config=local_deadline(config), slots=local.slots)
    kind, _, name = spec.partition(":")
    if not name:
        raise ConfigError(f"llm spec {spec!r} names no model")

    if kind == "openai":
        from hymem.llm.providers.openai import OpenAIBackend

        return PromptedRoles(OpenAIBackend.from_config(config), config=config)
    if kind == "hf":
        from hymem.llm.providers.hf import HFBackend

        return PromptedRoles(HFBackend(name), config=config)
    raise ConfigError(f"unknown llm spec {spec!r}: use {LLM_SPECS}")


# A model on this machine's CPU takes minutes where a hosted one takes seconds (a 0.5B model's
# session summary: 35-240 s on two cores), so its calls get this deadline unless one is set.
LOCAL_TIMEOUT_S = 600.0


def local_deadline(config: MemoryConfig) -> MemoryConfig:
    """`config` with `LOCAL_TIMEOUT_S` as llm_timeout_s where none was set explicitly."""
    if "llm_timeout_s" in config.model_fields_set:
        return config
    return config.model_copy(update={"llm_timeout_s": LOCAL_TIMEOUT_S})


class LazyRoles:
    """A `RolesProvider`: builds the roles for `config` on its first call, once, thread-safely.

    A Memory hands this one callable to its ingestor, reader and consolidator, so they share
    one model client and none is built until a role is actually needed. `close()` closes only
    roles it built itself, never roles it was given."""

    def __init__(
        self, config: MemoryConfig, embedder: Embedder, *, given: Roles | None = None
    ) -> None:
        self._config = config
        self._embedder = embedder
        self._roles = given
        self._owned = given is None
        self._lock = threading.Lock()

    @property
    def given(self) -> Roles | None:
        """The roles the caller handed in; None when they are built from the config."""
        return None if self._owned else self._roles

    def __call__(self) -> Roles:
        roles = self._roles
        if roles is None:
            with self._lock:
                if self._roles is None:
                    self._roles = build_roles(self._config, self._embedder)
                roles = self._roles
        return roles

    def close(self) -> None:
        with self._lock:
            if self._owned and self._roles is not None:
                self._roles.close()


__all__ = [
    "LOCAL_TIMEOUT_S",
    "LazyRoles",
    "Role",
    "RoleResult",
    "Roles",
    "RolesProvider",
    "build_roles",
    "count_tokens",
    "local_deadline",
    "map_concurrent",
]
