"""Past the scalar-index threshold, `optimize` gives the metadata token column a LABEL_LIST
index (the agent_id / run_id scopes are tokens too), and filtered LanceDB searches return
the same rows through it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hymem.core.filters import Filter
from hymem.indexes.lance import schema as S
from hymem.indexes.lance import upkeep
from hymem.indexes.protocol import RowScope
from hymem.indexes.store.store import Store

from tests.fixtures_store import make_segment, make_summary

pytestmark = pytest.mark.integration


def test_optimize_indexes_metadata_tokens_and_filters_still_agree(
    make_store: Callable[..., Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upkeep, "SCALAR_INDEX_MIN_ROWS", 10)
    store = make_store(dense_cache_bytes=0)  # every dense query through LanceDB's SQL
    metas = [{"agent_id": f"a{i % 3}", "n": i} for i in range(30)]
    sums = [
        make_summary("u", f"s{i}", f"note {i} about the lake", segment_id="g", metadata=m)
        for i, m in enumerate(metas)
    ]
    store.commit_segments("u", [make_segment("u", "g")], sums, [])
    cases = [
        {"agent_id": "a1"},
        {"agent_id": {"in": ["a0", "a2"]}, "n": {"lt": 20}},
        {"agent_id": {"ne": "a1"}},
    ]
    query = make_summary("q", "q", "note about the lake").vector or []

    def found() -> list[set[str]]:
        return [
            {i for i, _ in store.dense_search(RowScope("u", filters=Filter.parse(c)), query, 50)}
            for c in cases
        ]

    before = found()
    assert before == [
        {f"s{i}" for i, m in enumerate(metas) if Filter.parse(c).matches(m)} for c in cases
    ]
    store.optimize()
    indexed = {
        (tuple(cfg.columns), cfg.index_type)
        for cfg in store.tables.table(S.SUMMARIES).list_indices()
    }
    assert any(cols == ("meta_tokens",) and "label" in kind.lower() for cols, kind in indexed)
    assert found() == before
