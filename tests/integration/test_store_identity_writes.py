"""A store's identity rows are written in one atomic commit, so writers that race to write it
(an object store's losing opener giving up on a slow winner, say) never leave it twice."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest
from hymem.indexes.folder.lock import meta_from_rows, new_meta
from hymem.indexes.lance import schema as S
from hymem.indexes.lance.tables import LanceTables
from hymem.indexes.store.meta import MetaKeeper

pytestmark = pytest.mark.integration


class _Interleaved(LanceTables):
    """Real LanceDB tables whose deletes wait for the other writer's, so two writers run a
    delete-then-add write in the worst order: both deletes, then both adds."""

    def __init__(self, path: Path, turn: threading.Barrier) -> None:
        super().__init__(path, read_only=False)
        self._turn = turn

    def delete(self, name: str, where: str) -> None:
        super().delete(name, where)
        with contextlib.suppress(threading.BrokenBarrierError):  # a writer that deletes nothing
            self._turn.wait(timeout=5)


def test_writers_racing_to_write_the_identity_leave_one_copy(tmp_path: Path) -> None:
    """Before: a delete then an add, two commits; two writers interleaving them left every
    row twice (seen once when eight workers opened a new S3 store on a loaded machine)."""
    turn = threading.Barrier(2)
    keepers = []
    for _ in range(2):
        lance = _Interleaved(tmp_path / "lance", turn)
        lance.ensure(S.META, S.meta_schema())
        keepers.append(
            MetaKeeper(
                tmp_path, lance, read_only=False, embedder_name="hashing", dim=8, meta_file=None
            )
        )
    meta = new_meta(S.SCHEMA_VERSION, "hashing", 8)
    threads = [threading.Thread(target=k._write, args=(meta,)) for k in keepers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    check = LanceTables(tmp_path / "lance", read_only=True)
    assert check.open_existing(S.META)
    rows = check.rows(S.META, None)
    assert len(rows) == len({r["key"] for r in rows}) == len(meta), rows
    assert meta_from_rows(rows) is not None
