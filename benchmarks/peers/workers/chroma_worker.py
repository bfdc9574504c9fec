"""Chroma alone as a peer: a `PersistentClient` on the worker's folder, one collection for every
user (each memory carries its user and turn in its metadata, searches filter on the user) and
Chroma's `SentenceTransformerEmbeddingFunction` on the bundled MiniLM folder. Chroma's defaults
otherwise (HNSW, L2 space: MiniLM's vectors are unit length, so L2 ranks as cosine does). Local
Chroma has no lexical ranking, so this is dense search only. Telemetry is off."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from wire import Timer, installed_versions, serve_worker, take_stdout

CHANNEL = take_stdout()


class ChromaWorker:
    def __init__(self) -> None:
        self.client: Any = None
        self.col: Any = None

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as imp:
            import chromadb
            from chromadb.config import Settings
            from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction
        with Timer() as opened:
            self.client = chromadb.PersistentClient(
                path=req["path"], settings=Settings(anonymized_telemetry=False)
            )
            ef = SentenceTransformerEmbeddingFunction(model_name=req["model"], device="cpu")
            self.col = self.client.get_or_create_collection("memories", embedding_function=ef)
        return {
            "import_s": imp.seconds,
            "open_s": opened.seconds,
            "versions": {"chromadb": chromadb.__version__, **_versions()},
        }

    def add(self, req: dict[str, Any]) -> dict[str, Any]:
        user, items = req["user"], req["items"]
        ids = [f"{user}/{it['id']}" for it in items]
        docs = [it["memory"] for it in items]
        metas = [{"user_id": user, "turn_id": it["id"]} for it in items]
        step = 1 if req.get("one_by_one") else len(items)
        with Timer() as t:
            for s in range(0, len(items), step):
                self.col.add(
                    ids=ids[s : s + step],
                    documents=docs[s : s + step],
                    metadatas=metas[s : s + step],
                )
        return {"seconds": t.seconds}

    def flush(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"seconds": 0.0}  # Chroma indexes on add

    def search(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as t:
            out = self.col.query(
                query_texts=[req["query"]], n_results=req["k"], where={"user_id": req["user"]}
            )
        hits = [
            {"text": doc, "turns": [meta["turn_id"]]}
            for doc, meta in zip(out["documents"][0], out["metadatas"][0], strict=True)
        ]
        return {"seconds": t.seconds, "hits": hits}

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        """Precomputed vectors through `add(embeddings=...)`, in Chroma's largest batches."""
        import numpy as np

        texts = json.loads(Path(req["texts"]).read_text())
        vectors = np.load(req["vectors"])
        user, batch = req["user"], self.client.get_max_batch_size()
        with Timer() as t:
            for start in range(0, len(texts), batch):
                chunk = range(start, min(len(texts), start + batch))
                self.col.add(
                    ids=[f"{user}/m{i}" for i in chunk],
                    documents=[texts[i] for i in chunk],
                    embeddings=vectors[start : start + len(chunk)],
                    metadatas=[{"user_id": user, "turn_id": f"m{i}"} for i in chunk],
                )
        return {"seconds": t.seconds}

    def close(self, req: dict[str, Any]) -> dict[str, Any]:
        return {}


def _versions() -> dict[str, str]:
    return installed_versions("sentence-transformers", "torch")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    w = ChromaWorker()
    serve_worker(w, CHANNEL)
    sys.exit(0)
