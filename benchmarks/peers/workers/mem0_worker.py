"""mem0 OSS as a peer, without a model: `Memory.from_config` with the huggingface embedder on
the bundled MiniLM folder (a local path), mem0's default local vector store (Qdrant in local
mode, on disk under the worker's folder) and `add(..., infer=False)`, which stores each message
as one memory.

mem0 2.x builds an OpenAI client when the Memory is constructed, even though infer=False never
calls it, and refuses to start without a key; the llm config therefore names a dummy key and
http://127.0.0.1:9/v1, where nothing listens and nothing is ever sent. Telemetry is off
(MEM0_TELEMETRY=False) and MEM0_DIR points into the worker's folder.

mem0 returns its own memory ids; the turn each memory stands for is kept beside the store in
`turn_ids.json` (written outside the timed calls) so a fresh process can map hits back.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wire import Timer, installed_versions, serve_worker, take_stdout

CHANNEL = take_stdout()


class Mem0Worker:
    def __init__(self) -> None:
        self.mem: Any = None
        self.folder = Path(".")
        self.turn_of: dict[str, str] = {}
        self.embed_s = 0.0

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        self.folder = Path(req["path"])
        self.folder.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_DIR"] = str(self.folder / "mem0dir")
        with Timer() as imp:
            import mem0
            from mem0 import Memory
        config = {
            "embedder": {"provider": "huggingface", "config": {"model": req["model"]}},
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "path": str(self.folder / "qdrant"),
                    "collection_name": "memories",
                    "embedding_model_dims": 384,
                    "on_disk": True,
                },
            },
            "llm": {
                "provider": "openai",
                "config": {"api_key": "never-used", "openai_base_url": "http://127.0.0.1:9/v1"},
            },
            "history_db_path": str(self.folder / "history.db"),
        }
        with Timer() as opened:
            self.mem = Memory.from_config(config)
        self._time_embedding()
        sidecar = self.folder / "turn_ids.json"
        if sidecar.exists():
            self.turn_of = json.loads(sidecar.read_text())
        return {
            "import_s": imp.seconds,
            "open_s": opened.seconds,
            "versions": {"mem0ai": mem0.__version__, **_versions()},
        }

    def _time_embedding(self) -> None:
        """Count the seconds mem0 spends in its embedder (the same call, timed around)."""
        model = self.mem.embedding_model
        inner = model.embed
        self.embed_s = 0.0

        def embed(*args: Any, **kwargs: Any) -> Any:
            with Timer() as t:
                out = inner(*args, **kwargs)
            self.embed_s += t.seconds
            return out

        model.embed = embed

    def add(self, req: dict[str, Any]) -> dict[str, Any]:
        embed0 = self.embed_s
        items = req["items"]
        messages = [
            {"role": it["role"], "content": it["memory"], "name": it["speaker"]} for it in items
        ]
        chunks = [[m] for m in messages] if req.get("one_by_one") else [messages]
        results: list[dict[str, Any]] = []
        with Timer() as t:
            for chunk in chunks:
                out = self.mem.add(chunk, user_id=req["user"], infer=False)
                results.extend(out["results"])
        if len(results) != len(items):
            raise RuntimeError(f"mem0 stored {len(results)} of {len(items)} messages")
        for it, res in zip(items, results, strict=True):
            self.turn_of[res["id"]] = it["id"]
        return {"seconds": t.seconds, "embed_s": self.embed_s - embed0}

    def flush(self, req: dict[str, Any]) -> dict[str, Any]:
        """mem0 writes on add; the id map is saved here, untimed."""
        (self.folder / "turn_ids.json").write_text(json.dumps(self.turn_of))
        return {"seconds": 0.0}

    def search(self, req: dict[str, Any]) -> dict[str, Any]:
        with Timer() as t:
            out = self.mem.search(req["query"], top_k=req["k"], filters={"user_id": req["user"]})
        hits = [
            {"text": r["memory"], "turns": [self.turn_of.get(r["id"], r["id"])]}
            for r in out["results"]
        ]
        return {"seconds": t.seconds, "hits": hits}

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        """Precomputed vectors straight into mem0's vector store, with the payload mem0's own
        `_create_memory` writes (its history rows are left out: search never reads them).
        Qdrant's local mode commits (and syncs) its SQLite file once per point, ~15 ms here,
        which would make 100k points a 25-minute load; the load runs with SQLite's
        synchronous=OFF and restores it after, so only the load time is affected."""
        import numpy as np
        from mem0.utils.lemmatization import lemmatize_for_bm25

        texts = json.loads(Path(req["texts"]).read_text())
        vectors = np.load(req["vectors"])
        batch = int(req.get("batch", 1000))
        sqlite = self.mem.vector_store.client._client.collections["memories"].storage.storage
        sqlite.execute("PRAGMA synchronous=OFF")
        with Timer() as t:
            for start in range(0, len(texts), batch):
                now = datetime.now(UTC).isoformat()
                chunk = texts[start : start + batch]
                ids = [str(uuid.uuid4()) for _ in chunk]
                payloads = [
                    {
                        "data": text,
                        "hash": hashlib.md5(text.encode()).hexdigest(),
                        "created_at": now,
                        "updated_at": now,
                        "text_lemmatized": lemmatize_for_bm25(text),
                        "user_id": req["user"],
                        "role": "user",
                    }
                    for text in chunk
                ]
                self.mem.vector_store.insert(
                    vectors=vectors[start : start + batch].tolist(), ids=ids, payloads=payloads
                )
                for i, mid in enumerate(ids, start=start):
                    self.turn_of[mid] = f"m{i}"
        sqlite.execute("PRAGMA synchronous=FULL")
        return {"seconds": t.seconds}

    def close(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.mem is not None:
            self.flush({})
            self.mem.close()  # its SQLite history; the Qdrant client holds the folder lock
            self.mem.vector_store.client.close()
        return {}


def _versions() -> dict[str, str]:
    return installed_versions("qdrant-client", "sentence-transformers", "torch")


if __name__ == "__main__":
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    w = Mem0Worker()
    serve_worker(w, CHANNEL)
    sys.exit(0)
