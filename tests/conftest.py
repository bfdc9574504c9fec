"""Shared fixtures. Each area keeps its fixtures in tests/fixtures_<area>.py, loaded here."""

from __future__ import annotations

import os

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
]
