"""hymem as a system under test, in hymem's own virtual environment: `Memory(folder)` with its
defaults (extractive backend, the bundled MiniLM), one `add()` per session (its batched add)
or one per turn (`one_by_one`), `flush()` at the end of each history, `search()` for top-k and
`context(depth="light")` for what the light path reads under its token budget.

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


class HymemWorker:
    def __init__(self) -> None:
        self.mem: Any = None

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as imp:
            import hymem
            from hymem import Memory
        with Timer() as opened:
            self.mem = Memory(req["path"])
        from importlib.metadata import version

        versions = {p: version(p) for p in ("lancedb", "tantivy", "sentence-transformers")}
        return {
            "import_s": imp.seconds,
            "open_s": opened.seconds,
            "versions": {"hymem": hymem.__version__, **versions},
        }

    def add(self, req: dict[str, Any]) -> dict[str, Any]:
        messages = [
            {"speaker": it["speaker"], "text": it["text"], "id": it["id"]} for it in req["items"]
        ]
        chunks = [[m] for m in messages] if req.get("one_by_one") else [messages]
        with Timer() as t:
            for chunk in chunks:
                self.mem.add(
                    chunk, user_id=req["user"], session_id=req["session"], timestamp=req["time"]
                )
        return {"seconds": t.seconds}

    def flush(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as t:
            self.mem.flush(user_id=req["user"])
        return {"seconds": t.seconds}

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
        from hymem_fill import fill_store

        texts = json.loads(Path(req["texts"]).read_text())
        vectors = np.load(req["vectors"])
        with Timer() as t:
            fill_store(self.mem.store, req["user"], texts, vectors)
            self.mem.store.optimize()
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
