"""Shared fixtures. Each area keeps its fixtures in tests/fixtures_<area>.py, loaded here."""

from __future__ import annotations

import os

import pytest

# The conformance suites live in hymem.testing; their asserts explain themselves as a test's do.
pytest.register_assert_rewrite("hymem.testing")

# No test may reach a model hub: the MiniLM weights come from the installed package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")
# Tests decide their own configuration; a developer's HYMEM_* variables must not leak in.
for _name in [n for n in os.environ if n.startswith("HYMEM_")]:
    del os.environ[_name]

pytest_plugins = [
    "tests.fixtures_store",
    "tests.fixtures_llm",
    "tests.fixtures_ingest",
    "tests.fixtures_reader",
    "tests.fixtures_sleep",
    "tests.fixtures_eval",
    "tests.fixtures_lme",
    "tests.fixtures_serve",
    "tests.fixtures_s3",
    "tests.worker_finish",
]

# The S3 kit runs the seams issue's conformance suites (storage, management); the metadata and
# search suites, which add nothing S3-specific and cost ~2 minutes on moto, run on the local
# kinds only, to keep the whole suite under its 10-minute budget on 2 cores.
_LOCAL_ONLY_SUITES = ("test_storage_metadata_conformance.py", "test_storage_search_conformance.py")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    keep, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_s3 = callspec is not None and callspec.params.get("storage_kit") == "s3"
        (dropped if on_s3 and item.path.name in _LOCAL_ONLY_SUITES else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
