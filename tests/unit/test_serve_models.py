"""The REST request bodies mirror the `Memory` methods they call, and API keys bind exactly
the users they name: the API cannot drift from the library, and a key cannot reach past its
binding."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from hymem.api.memory import Memory
from hymem.core.errors import ConfigError
from hymem.serve import models as M
from hymem.serve.auth import Binding, KeyRing, append_key, is_loopback, key_hash
from hymem.serve.errors import http_error

# model -> (method, its parameters the API leaves out on purpose)
MIRRORS = {
    M.AddRequest: ("add", set()),
    M.SearchRequest: ("search", set()),
    M.AskRequest: ("ask", set()),
    M.ContextRequest: ("context", set()),
    M.UpdateRequest: ("update", {"memory_id"}),  # in the path
    M.SleepRequest: ("sleep", {"max_workers", "progress"}),  # server's setting; a callback
}


@pytest.mark.parametrize("model", list(MIRRORS))
def test_each_request_body_has_exactly_its_methods_parameters(model: type) -> None:
    method, left_out = MIRRORS[model]
    params = set(inspect.signature(getattr(Memory, method)).parameters) - {"self"}
    assert set(model.model_fields) == params - left_out


def test_bindings_allow_exactly_their_user_or_prefix() -> None:
    ring = KeyRing.from_env("k1=alice, k2=team-*, k3=*, k4=x' OR '1'='1")
    assert ring.binding("k1") == Binding("alice") and ring.binding("nope") is None
    assert ring.binding("k1").allows("alice") and not ring.binding("k1").allows("alice2")
    team = ring.binding("k2")
    assert team.allows("team-1") and not team.allows("tea") and not team.allows("alice")
    assert ring.binding("k3").allows("anyone")
    evil = ring.binding("k4")
    assert evil.allows("x' OR '1'='1") and not evil.allows("alice")
    for bad in ("k1", "=alice", "k1=", "k1=al*ce", "k1=**"):
        with pytest.raises(ConfigError):
            KeyRing.from_env(bad)


def test_a_keys_file_holds_hashes_only(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    key = append_key(path, "alice")
    text = path.read_text()
    assert key not in text and key_hash(key) in text and oct(path.stat().st_mode)[-3:] == "600"
    assert KeyRing.from_file(path).binding(key) == Binding("alice")
    path.write_text("not-a-hash alice\n")
    with pytest.raises(ConfigError, match="line 1"):
        KeyRing.from_file(path)


def test_loopback_and_error_statuses() -> None:
    from hymem.core import errors as E

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    assert http_error(E.NotFoundError("memory", "x"))[0] == 404
    assert http_error(E.InvalidMessageError(0, "bad"))[0] == 400
    assert http_error(E.StorageFullError("full"))[0] == 507
    status, body, headers = http_error(E.LLMUnavailable("down", role="select"))
    assert status == 503 and headers["Retry-After"] and body["error"] == "LLMUnavailable"
    assert http_error(E.LLMAuthError("no"))[0] == 502
    assert http_error(E.CommitConflictError("stale"))[0] == 409
    status, _, headers = http_error(E.StoreUnavailableError("s3 is down"))
    assert status == 503 and headers["Retry-After"]
