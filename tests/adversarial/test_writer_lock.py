"""A second writer that gets past a deleted `writer.lock` stops at Tantivy's own lock with a
typed `StoreLockedError`, and the first writer's index is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig, StoreLockedError
from hymem.testing import embedder_of, store_of

from tests.fixtures_store import commit_texts

pytestmark = pytest.mark.integration


def test_deleting_writer_lock_does_not_let_a_second_writer_in(tmp_path: Path) -> None:
    """Before: the second open reached Tantivy's raw `LockBusy` ValueError."""
    cfg = MemoryConfig.defaults(embedder="hashing:64")
    with Memory(tmp_path / "m", config=cfg) as first:
        commit_texts(store_of(first), embedder_of(first), "alice", ["Alice adopted a cat"])
        (tmp_path / "m" / "writer.lock").unlink()
        with pytest.raises(StoreLockedError, match="another process"):
            Memory(tmp_path / "m", config=cfg)
        hits = first.search("cat", user_id="alice", mode="lexical")
        assert [h.text for h in hits] == ["Alice adopted a cat"]  # nothing was wiped
        commit_texts(store_of(first), embedder_of(first), "alice", ["Alice sings"], segment_id="g2")
        assert first.search("sings", user_id="alice", mode="lexical")
