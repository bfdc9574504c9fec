"""hymem as a system under test, in hymem's own virtual environment: `Memory(folder)` with its
defaults (extractive backend, the bundled MiniLM), one `add()` per session (its batched add)
or one per turn (`one_by_one`), `flush()` at the end of each history, `search()` for top-k and
`context(depth="light")` for what the light path reads under its token budget. Its default
embedder is wrapped only to count the seconds spent embedding (`TimedEmbedder`).

A hit stands for the turns `hit_turn_ids` gives it (a summary's own source turns, else its
segment's): the same crediting every hymem benchmark uses.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from wire import Timer, serve, take_stdout

CHANNEL = take_stdout()


class TimedEmbedder:
    """hymem's default embedder, unchanged, with the seconds spent in it counted: how much of
    an add is embedding (turns, segments and summaries alike) and how much is the rest."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return str(self._inner.name)

    @property
    def dim(self) -> int:
        return int(self._inner.dim)

    def embed(self, texts: Any) -> Any:
        with Timer() as t:
            out = self._inner.embed(texts)
        self.seconds += t.seconds
        return out

    def embed_with_tokens(self, texts: Any) -> Any:
        with Timer() as t:
            out = self._inner.embed_with_tokens(texts)
        self.seconds += t.seconds
        return out


class HymemWorker:
    def __init__(self) -> None:
        self.mem: Any = None
        self.embedder: Any = None

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as imp:
            import hymem
            from hymem import Memory, MemoryConfig
            from hymem.embed.embedders import resolve_embedder
        with Timer() as opened:
            config = MemoryConfig.defaults()
            inner = resolve_embedder(config.embedder, batch_size=config.embed_batch_size)
            self.embedder = TimedEmbedder(inner)
            self.mem = Memory(req["path"], config=config, embedder=self.embedder)
        from importlib.metadata import version

        versions = {p: version(p) for p in ("lancedb", "tantivy", "sentence-transformers")}
        return {
            "import_s": imp.seconds,
            "open_s": opened.seconds,
            "versions": {"hymem": hymem.__version__, **versions},
        }

    def add(self, req: dict[str, Any]) -> dict[str, Any]:
        # A chat (LongMemEval) names roles, a conversation (LoCoMo) names speakers: each is
        # given as hymem's own harnesses give it.
        messages = [
            {"role": it["role"], "content": it["text"], "id": it["id"]}
            if it["speaker"] == it["role"]
            else {"speaker": it["speaker"], "text": it["text"], "id": it["id"]}
            for it in req["items"]
        ]
        chunks = [[m] for m in messages] if req.get("one_by_one") else [messages]
        embed0 = self.embedder.seconds
        with Timer() as t:
            for chunk in chunks:
                self.mem.add(
                    chunk, user_id=req["user"], session_id=req["session"], timestamp=req["time"]
                )
        return {"seconds": t.seconds, "embed_s": self.embedder.seconds - embed0}

    def flush(self, req: dict[str, Any]) -> dict[str, Any]:
        embed0 = self.embedder.seconds
        with Timer() as t:
            self.mem.flush(user_id=req["user"])
        return {"seconds": t.seconds, "embed_s": self.embedder.seconds - embed0}

    def search(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as t:
            hits = self.mem.search(req["query"], user_id=req["user"], k=req["k"])
        return {"seconds": t.seconds, "hits": self._hits(hits, req["user"])}

    def context(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as t:
            hits = self.mem.context(req["query"], user_id=req["user"], depth="light")
        return {"seconds": t.seconds, "hits": self._hits(hits, req["user"])}

    def _hits(self, hits: list[Any], user: str) -> list[dict[str, Any]]:
        from hymem.evaluation.systems import hit_turn_ids

        return [{"text": h.text, "turns": hit_turn_ids(self.mem, [h], user)} for h in hits]

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        """Precomputed vectors committed as Level-1 summaries (one Level-2 segment per 50, as
        the retrieval-latency benchmark fills its stores), then `optimize()`, which builds the
        vector and scalar indexes a store of this size gets."""
        import json

        import numpy as np
        from hymem.api.internals import store_of
        from hymem_fill import fill_store

        texts = json.loads(Path(req["texts"]).read_text())
        vectors = np.load(req["vectors"])
        with Timer() as t:
            fill_store(store_of(self.mem), req["user"], texts, vectors)
            self.mem.optimize()
        return {"seconds": t.seconds}

    def close(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.mem is not None:
            self.mem.close()
        return {}


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LANCEDB_LOG", "error")
    logging.getLogger("hymem").setLevel(logging.WARNING)  # per-call events are for dashboards
    w = HymemWorker()
    serve(
        {
            "open": w.open,
            "add": w.add,
            "flush": w.flush,
            "search": w.search,
            "context": w.context,
            "load": w.load,
            "close": w.close,
        },
        CHANNEL,
    )
    sys.exit(0)
