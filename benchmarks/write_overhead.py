"""hymem's own write-path cost, with the model taken out.

    HF_HUB_OFFLINE=1 python benchmarks/write_overhead.py [--passes 3]

Each history is ingested once to fill a memo of every output the model produced (sentence and
token vectors, keyed by text), then ingested again `--passes` times into fresh stores with every
vector served from the memo: what remains is segmentation, summarising (extractive), the
commits to LanceDB and Tantivy and every check in between. The embedding floor of
`write_path.py` swings with the machine's load; this figure swings far less, so it says whether
a change to hymem's own code made the write path slower. Run it on two commits and compare.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from hymem import Memory
from hymem.embed.embedders import SentenceTransformerEmbedder, TokenVectors
from rich.console import Console
from rich.table import Table
from write_path import SHARED, History, lme_history, locomo_history


class ReplayEmbedder:
    """The real MiniLM behind a memo of everything it returned, token vectors included (the
    evaluation `MemoEmbedder` keeps sentence vectors only). Same name and dim as MiniLM."""

    def __init__(self) -> None:
        self.inner = SentenceTransformerEmbedder()
        self._vectors: dict[str, np.ndarray] = {}
        self._tokens: dict[str, TokenVectors] = {}
        self.model_texts = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self.model_texts += len(missing)
            self._vectors.update(zip(missing, self.inner.embed(missing), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def embed_with_tokens(self, texts: list[str]) -> tuple[np.ndarray, list[TokenVectors]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._tokens]
        if missing:
            self.model_texts += len(missing)
            vectors, tokens = self.inner.embed_with_tokens(missing)
            self._vectors.update(zip(missing, vectors, strict=True))
            self._tokens.update(zip(missing, tokens, strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32), []
        return np.stack([self._vectors[t] for t in texts]), [self._tokens[t] for t in texts]


def ingest(history: History, embedder: ReplayEmbedder, mode: str) -> float:
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory(Path(folder) / "m", embedder=embedder) as mem,
    ):
        started = time.perf_counter()
        for sid, stamp, msgs in history.sessions:
            if mode == "bulk":
                mem.add(msgs, user_id="u", session_id=sid, timestamp=stamp)
            else:
                for m in msgs:
                    mem.add([m], user_id="u", session_id=sid, timestamp=stamp)
        mem.flush(user_id="u")
        return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    embedder = ReplayEmbedder()
    histories = [
        lme_history(SHARED / "longmemeval" / "longmemeval_s_dev.json.gz", 0),
        locomo_history(SHARED / "locomo" / "locomo10-dev.json", "conv-26"),
    ]
    table = Table(title="Write path without the model (every vector from a memo)")
    for col in ("history", "mode", "turns", "median s", "min s", "turns/s", "texts to model"):
        table.add_column(col)
    for history in histories:
        turns = len(history.texts)
        for mode in ("live", "bulk"):
            ingest(history, embedder, mode)  # fills the memo
            before = embedder.model_texts
            runs = [ingest(history, embedder, mode) for _ in range(args.passes)]
            median = statistics.median(runs)
            table.add_row(
                history.name,
                mode,
                str(turns),
                f"{median:.2f}",
                f"{min(runs):.2f}",
                f"{turns / median:.1f}",
                str(embedder.model_texts - before),  # 0: the timed passes never ran the model
            )
    Console().print(table)


if __name__ == "__main__":
    main()
