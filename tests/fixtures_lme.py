"""Fixtures for the LongMemEval tests: the tiny LongMemEval-format file (6 questions of five
types, one abstention; 3-5 short sessions each, `has_answer` flags, `answer_session_ids`), its
.json.gz twin made on the fly, and damaged copies for the bad-input tests."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

LME_MINI = Path(__file__).parent / "data" / "longmemeval_mini.json"
# Questions scored for retrieval (all but the abstention one) and all retrieval systems.
LME_SCORED = ["q_ssu_01", "q_ms_02", "q_ku_03", "q_tr_04", "q_ssa_05"]
LME_ABSTENTION = "q_ssu_06_abs"


def lme_data() -> list[dict[str, Any]]:
    return json.loads(LME_MINI.read_text(encoding="utf-8"))


@pytest.fixture
def lme_gz(tmp_path: Path) -> Path:
    """The fixture gzip-compressed, as the development split is shipped."""
    path = tmp_path / "longmemeval_mini.json.gz"
    path.write_bytes(gzip.compress(LME_MINI.read_bytes()))
    return path


@pytest.fixture
def lme_variant(tmp_path: Path) -> Callable[[Callable[[list[dict[str, Any]]], None]], Path]:
    """Writes a copy of the fixture changed by `edit(data)` and returns its path."""

    def make(edit: Callable[[list[dict[str, Any]]], None]) -> Path:
        data = copy.deepcopy(lme_data())
        edit(data)
        path = tmp_path / f"variant-{len(list(tmp_path.glob('variant-*')))}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return make
