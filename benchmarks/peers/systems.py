"""The systems under test: a library (its venv and worker script) and how it is fed.

Every library is fed the same turns in two ways where it has a batched add: one call per
session, its batched add (`hymem`, `mem0`, `chroma`, `lancedb`), and one call per turn
(`*-1turn`), each into a store of its own. A peer stores the same memories both ways (one per
turn), so its one-turn twin is measured for ingest (and disk) only, and is not in the default
set; hymem's one-turn adds may segment and summarise differently, so `hymem-1turn` is searched
and scored like the rest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class System:
    name: str
    peer: str  # the venv: "hymem" (the driver's own), "mem0", "chroma", "lancedb"
    script: str
    one_by_one: bool
    config: str  # what it runs with, for the report

    @property
    def searched(self) -> bool:
        """A peer's one-turn twin holds the same memories as the peer: not searched again."""
        return self.peer == "hymem" or not self.one_by_one

    @property
    def has_context(self) -> bool:
        """hymem answers from its light-path context, which fills a token budget itself."""
        return self.peer == "hymem"


_CONFIG = {
    "hymem": "Memory(folder) defaults: extractive backend, bundled MiniLM, hybrid search",
    "mem0": "mem0 OSS, infer=False, huggingface embedder (MiniLM path), local Qdrant on disk",
    "chroma": "PersistentClient, SentenceTransformerEmbeddingFunction (MiniLM path), HNSW",
    "lancedb": "registry sentence-transformers (MiniLM path), FTS + BTree, hybrid (RRF)",
}
_SCRIPT = {
    "hymem": "hymem_worker.py",
    "mem0": "mem0_worker.py",
    "chroma": "chroma_worker.py",
    "lancedb": "lancedb_worker.py",
}
LIBRARIES = tuple(_SCRIPT)


def _system(peer: str, one_by_one: bool) -> System:
    feed = "one add per turn" if one_by_one else "one add per session"
    name = f"{peer}-1turn" if one_by_one else peer
    return System(name, peer, _SCRIPT[peer], one_by_one, f"{_CONFIG[peer]}; {feed}")


SYSTEMS: dict[str, System] = {
    s.name: s for peer in LIBRARIES for s in (_system(peer, False), _system(peer, True))
}
DEFAULT_SYSTEMS = ("hymem", "hymem-1turn", "mem0", "chroma", "lancedb")
REFERENCE = "hymem"


def pick(names: list[str]) -> list[System]:
    """The named systems in the given order, hymem first; ValueError names unknown ones."""
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        raise ValueError(f"unknown system(s) {unknown}; choose from {', '.join(SYSTEMS)}")
    chosen = list(dict.fromkeys([REFERENCE, *names]))
    return [SYSTEMS[n] for n in chosen]
