"""API keys for the REST server: each key is bound to one user id, or to a prefix of user ids.

Keys are compared by their SHA-256 hash only: a keys file holds hashes (`hymem keys new` writes
one and prints the key once), and keys given in plain text through `HYMEM_API_KEYS` are hashed
when read and never kept. Keys are random 256-bit tokens, not passwords, so one unsalted hash
is enough to make a leaked file useless; the lookup is by hash, so a key's comparison time does
not depend on how much of it matched.

    HYMEM_API_KEYS="k1=alice,k2=team-*"      plain keys; a trailing * binds a prefix, a lone *
                                             every user (an admin key)
    keys file:   <sha256 hex> alice            one binding per line, '#' starts a comment
                 <sha256 hex> team-*
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from hymem.core.errors import ConfigError

_HEX = frozenset("0123456789abcdef")


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    return "hm_" + secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class Binding:
    """What one key may touch: exactly `user`, or every user id starting with it."""

    user: str
    prefix: bool = False

    def allows(self, user_id: str) -> bool:
        return user_id.startswith(self.user) if self.prefix else user_id == self.user

    @classmethod
    def parse(cls, text: str, where: str) -> Binding:
        text = text.strip()
        if text == "*":  # every user: an admin key (sleep over all users, any erasure)
            return cls("", True)
        prefix = text.endswith("*")
        user = text[:-1] if prefix else text
        if not user or "*" in user:
            raise ConfigError(f"{where}: {text!r} is not a user id or a prefix ending in *")
        return cls(user, prefix)


class KeyRing:
    """Hash -> binding. Empty means no key is accepted (open mode is a separate choice)."""

    def __init__(self, bindings: dict[str, Binding] | None = None) -> None:
        self._by_hash = dict(bindings or {})

    def __len__(self) -> int:
        return len(self._by_hash)

    def binding(self, key: str) -> Binding | None:
        return self._by_hash.get(key_hash(key))

    def add_plain(self, key: str, binding: Binding) -> None:
        self._by_hash[key_hash(key)] = binding

    @classmethod
    def from_env(cls, spec: str) -> KeyRing:
        """`key=user,key2=prefix*` (the HYMEM_API_KEYS format)."""
        ring = cls()
        for n, pair in enumerate(p for p in spec.split(",") if p.strip()):
            key, sep, user = pair.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"HYMEM_API_KEYS entry {n + 1} is not key=user")
            ring.add_plain(key.strip(), Binding.parse(user, f"HYMEM_API_KEYS entry {n + 1}"))
        return ring

    @classmethod
    def from_file(cls, path: Path) -> KeyRing:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the keys file {path}: {exc}") from exc
        ring = cls()
        for n, raw in enumerate(lines, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            digest, _, user = line.partition(" ")
            where = f"{path}, line {n}"
            if len(digest) != 64 or not set(digest) <= _HEX:
                raise ConfigError(f"{where}: expected '<sha256 hex of the key> <user>'")
            ring._by_hash[digest] = Binding.parse(user, where)
        return ring

    def merged(self, other: KeyRing) -> KeyRing:
        return KeyRing({**self._by_hash, **other._by_hash})


def append_key(path: Path, binding_text: str) -> str:
    """Create a key bound to `binding_text`, append its hash to the keys file, return the key
    (shown once: it is not stored)."""
    Binding.parse(binding_text, "the user")
    key = new_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"{key_hash(key)} {binding_text.strip()}\n")
    path.chmod(0o600)
    return key


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = ["Binding", "KeyRing", "append_key", "is_loopback", "key_hash", "new_key"]
