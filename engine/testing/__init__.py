"""The conformance suites of hymem's storage ports, for any store: the tests hymem runs against
each of its own store kinds (a folder, an object store, shards, the in-memory twin), shipped as
haystack ships `haystack/testing`, so that a third-party `Storage` can prove itself.

A store under test subclasses the suites and supplies one fixture, `storage_kit`, yielding a
`StorageKit` over a fresh, empty store opened with `embedder_name="hashing-64"` and `dim=DIM`
(the records the suites build carry that embedder's vectors)::

    import pytest
    from hymem.embed.embedders import HashingEmbedder
    from hymem.testing import DIM, StorageKit, StorageSuite

    class TestMyStore(StorageSuite):
        @pytest.fixture
        def storage_kit(self, tmp_path):
            store = MyStore(tmp_path, embedder_name="hashing-64", dim=DIM)
            reader = lambda: MyStore(tmp_path, embedder_name="hashing-64", dim=DIM, read_only=True)
            yield StorageKit("mine", store, HashingEmbedder(dim=DIM), reader)
            store.close()

or parametrizes that fixture (`@pytest.fixture(params=[...])`) to run every test once per kind,
as hymem's own `tests/fixtures_store.py` does. One suite per concern, or `StorageSuite` for all:

    StorageTests        lifecycle, turns, commits, reads, history, traces   (storage.py)
    SearchTests         dense and lexical search, time ranges, hydration    (search.py)
    MetadataTests       metadata filters in every read and search           (metadata.py)
    ManageTests         pages, erasure, withdrawal                          (manage.py)
    ValidityTests       validity in time, memory ids and fact keys          (validity.py)
    SleepLogTests       the sleep journal's lines                           (sleep_log.py)
    ConsolidationTests  the write path's merges over the store              (consolidation.py)

`storage_kit.kind` names the store; the few promises that differ by kind ask it (only "s3"
replicas lag). Call `pytest.register_assert_rewrite("hymem.testing")` in your conftest.py for
pytest's detailed assertion messages. The suites import pytest; `import hymem` never imports
this package.

It also re-exports the seam into a `Memory`'s parts (`hymem.api.internals`: `store_of`,
`searcher_of`, `roles_of`, `embedder_of`, `served`), which tests reach instead of the
deprecated properties; for hymem's own tests, not a stable API.
"""

from __future__ import annotations

from hymem.api.internals import embedder_of, roles_of, searcher_of, served, store_of
from hymem.testing.consolidation import ConsolidationTests
from hymem.testing.manage import ManageTests
from hymem.testing.metadata import MetadataTests
from hymem.testing.records import (
    BASE_TIME,
    DIM,
    StorageKit,
    make_segment,
    make_summary,
    make_turns,
)
from hymem.testing.search import SearchTests
from hymem.testing.sleep_log import SleepLogTests
from hymem.testing.storage import StorageTests
from hymem.testing.validity import ValidityTests


class StorageSuite(
    StorageTests,
    SearchTests,
    MetadataTests,
    ManageTests,
    ValidityTests,
    SleepLogTests,
    ConsolidationTests,
):
    """Every suite: what a complete `Storage` passes."""


__all__ = [
    "BASE_TIME",
    "DIM",
    "ConsolidationTests",
    "ManageTests",
    "MetadataTests",
    "SearchTests",
    "SleepLogTests",
    "StorageKit",
    "StorageSuite",
    "StorageTests",
    "ValidityTests",
    "embedder_of",
    "make_segment",
    "make_summary",
    "make_turns",
    "roles_of",
    "searcher_of",
    "served",
    "store_of",
]
