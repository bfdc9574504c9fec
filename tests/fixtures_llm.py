"""Fixtures for the llm tests: the scripted server, roles wired to it, and a no-network guard."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pytest

from tests.llm_server import ScriptedLLMServer

if TYPE_CHECKING:
    from hymem.llm.prompted import PromptedRoles

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def assert_loopback(url: str) -> None:
    """Refuse any base URL that could leave this machine."""
    host = urlparse(url).hostname
    if host not in LOOPBACK:
        raise RuntimeError(f"tests may only talk to loopback model servers, not {url!r}")


@pytest.fixture(autouse=True)
def _no_remote_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches a hosted model by accident: the environment's OpenAI endpoint becomes a
    dead loopback port and any real key is removed."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer().start()
    assert_loopback(server.base_url)
    try:
        yield server
    finally:
        server.stop()


def make_scripted_roles(
    server: ScriptedLLMServer, slots: threading.Semaphore | None = None, **config: Any
) -> PromptedRoles:
    """PromptedRoles against `server` with millisecond backoffs, so fault tests stay fast."""
    from hymem.core.config import MemoryConfig
    from hymem.llm.prompted import PromptedRoles
    from hymem.llm.providers.openai import OpenAIBackend
    from hymem.llm.retry import RetryPolicy

    assert_loopback(server.base_url)
    settings: dict[str, Any] = {
        "llm": "openai:test-model",
        "llm_base_url": server.base_url,
        "llm_api_key": "test-key",
        "llm_timeout_s": 5.0,
        "llm_max_retries": 3,
    }
    settings.update(config)
    cfg = MemoryConfig.defaults(**settings)
    policy = RetryPolicy(
        max_retries=cfg.llm_max_retries,
        deadline_s=cfg.llm_timeout_s,
        initial_backoff_s=0.01,
        max_backoff_s=0.05,
        jitter_s=0.01,
    )
    return PromptedRoles(
        OpenAIBackend.from_config(cfg), config=cfg, retry_policy=policy, slots=slots
    )


@pytest.fixture
def scripted_roles(llm_server: ScriptedLLMServer) -> Iterator[PromptedRoles]:
    roles = make_scripted_roles(llm_server)
    try:
        yield roles
    finally:
        roles.close()
