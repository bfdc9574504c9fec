"""Tantivy's BM25 scores depend on the index's write history, not only on what it holds: a
replaced document is still counted in the statistics until a merge drops it. A rebuild from
the same documents (`LexicalIndex.rebuild`, `hymem reindex`) scores like an index that never
replaced anything, which is why `hymem eval` rebuilds before it searches."""

from __future__ import annotations

from pathlib import Path

import pytest
from hymem.core.types import Level
from hymem.indexes.lexical.index import LexDoc, LexicalIndex

pytestmark = pytest.mark.integration

DOCS = [
    LexDoc("a", "u", Level.SUMMARY, "Melanie went camping at the beach with the kids."),
    LexDoc("b", "u", Level.SUMMARY, "Caroline went to a support group on Friday."),
    LexDoc("c", "u", Level.SUMMARY, "Melanie paints sunsets by the lake."),
]


def scores(index: LexicalIndex) -> dict[str, float]:
    return dict(index.search("u", "Melanie camping beach", 10))


def test_a_rebuild_scores_like_an_index_that_never_replaced_a_document(tmp_path: Path) -> None:
    never = LexicalIndex(tmp_path / "never", writable=True)
    never.upsert(DOCS)
    never.commit()
    replaced = LexicalIndex(tmp_path / "replaced", writable=True)
    replaced.upsert(DOCS)
    replaced.commit()
    replaced.upsert(DOCS[:1])  # the same row written again (a re-commit, a status change)
    replaced.commit()
    try:
        assert scores(replaced).keys() == scores(never).keys()
        assert scores(replaced) != pytest.approx(scores(never), abs=1e-6)  # history shows
        replaced.rebuild(DOCS)
        assert scores(replaced) == pytest.approx(scores(never), abs=1e-6)
    finally:
        never.close()
        replaced.close()
