"""LanceDB alone as a peer, with its own hybrid search: one table for every user, the
sentence-transformers embedding function from LanceDB's registry on the bundled MiniLM folder
(so `add` embeds and a text query is embedded by the table itself), a native full-text index
on the text, a BTree index on user_id, and `search(query, query_type="hybrid")` prefiltered by
user, fused by LanceDB's default reranker (reciprocal rank).

Indexes are built at a history's end (`flush`): the first time `create_index`, afterwards
`optimize()`, which folds new rows into them (LanceDB's advice; rows not yet indexed are still
searched, by a flat scan). At 100k rows the vector column also gets LanceDB's default vector
index (IVF_PQ, L2 on unit vectors, default search parameters), as its docs advise at that size.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from wire import Timer, installed_versions, serve_worker, take_stdout

CHANNEL = take_stdout()
TABLE = "memories"


class LanceWorker:
    def __init__(self) -> None:
        self.table: Any = None
        self.indexed = False

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as imp:
            import lancedb
            from lancedb.embeddings import get_registry
            from lancedb.pydantic import LanceModel, Vector
        with Timer() as opened:
            db = lancedb.connect(req["path"])
            if TABLE in db.table_names():
                self.table = db.open_table(TABLE)  # the embedding function is in its schema
                self.indexed = bool(self.table.list_indices())
            else:
                func = (
                    get_registry()
                    .get("sentence-transformers")
                    .create(name=req["model"], device="cpu")
                )

                class Memory(LanceModel):
                    id: str
                    user_id: str
                    turn_id: str
                    text: str = func.SourceField()
                    vector: Vector(func.ndims()) = func.VectorField()  # type: ignore[valid-type]

                self.table = db.create_table(TABLE, schema=Memory)
        return {
            "import_s": imp.seconds,
            "open_s": opened.seconds,
            "versions": {"lancedb": lancedb.__version__, **_versions()},
        }

    def add(self, req: dict[str, Any]) -> dict[str, Any]:
        user = req["user"]
        rows = [
            {"id": f"{user}/{it['id']}", "user_id": user, "turn_id": it["id"], "text": it["memory"]}
            for it in req["items"]
        ]
        step = 1 if req.get("one_by_one") else len(rows)
        with Timer() as t:
            for s in range(0, len(rows), step):
                self.table.add(rows[s : s + step])
        return {"seconds": t.seconds}

    def flush(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as t:
            self._index()
        return {"seconds": t.seconds}

    def _index(self, vectors: bool = False) -> None:
        from lancedb.index import FTS, BTree, IvfPq

        if self.indexed:
            self.table.optimize()
            return
        self.table.create_index("text", config=FTS())
        self.table.create_index("user_id", config=BTree())
        if vectors:
            self.table.create_index("vector", config=IvfPq())
        self.indexed = True

    def search(self, req: dict[str, Any]) -> dict[str, Any]:
        user = req["user"].replace("'", "''")
        with Timer() as t:
            rows = (
                self.table.search(req["query"], query_type="hybrid")
                .where(f"user_id = '{user}'", prefilter=True)
                .limit(req["k"])
                .select(["turn_id", "text"])
                .to_list()
            )
        hits = [{"text": r["text"], "turns": [r["turn_id"]]} for r in rows]
        return {"seconds": t.seconds, "hits": hits}

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        """Precomputed vectors given with the rows (the embedding function then does not run),
        then the same indexes plus the vector index."""
        import numpy as np
        import pyarrow as pa

        texts = json.loads(Path(req["texts"]).read_text())
        vectors = np.load(req["vectors"]).astype(np.float32)
        user, batch, dim = req["user"], 20_000, vectors.shape[1]
        with Timer() as t:
            for start in range(0, len(texts), batch):
                idx = range(start, min(len(texts), start + batch))
                flat = pa.array(vectors[start : start + len(idx)].reshape(-1))
                self.table.add(
                    pa.table(
                        {
                            "id": [f"{user}/m{i}" for i in idx],
                            "user_id": [user] * len(idx),
                            "turn_id": [f"m{i}" for i in idx],
                            "text": texts[start : start + len(idx)],
                            "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
                        }
                    )
                )
            self._index(vectors=True)
        return {"seconds": t.seconds}

    def close(self, req: dict[str, Any]) -> dict[str, Any]:
        return {}


def _versions() -> dict[str, str]:
    return installed_versions("sentence-transformers", "torch", "pyarrow")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LANCEDB_LOG", "error")
    w = LanceWorker()
    serve_worker(w, CHANNEL)
    sys.exit(0)
