"""The LongMemEval harness with the real MiniLM embedder (offline, from the bundled package):
hymem's retrieval and the dense baselines find the evidence of a plain question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hymem.core.config import MemoryConfig
from hymem.evaluation.longmemeval.records import RetrievalRecord
from hymem.evaluation.longmemeval.runner import LmeOptions, run_longmemeval
from hymem.evaluation.longmemeval.systems import RETRIEVAL_SYSTEMS
from hymem.evaluation.predictions import read_predictions

from tests.fixtures_lme import LME_MINI

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_minilm_run_scores_every_system(tmp_path: Path, minilm: Any) -> None:
    out = tmp_path / "run"
    res = run_longmemeval(
        LmeOptions(dataset=LME_MINI, out=out, questions=["q_ssu_01"], dashboard=False),
        MemoryConfig.defaults(),
        embedder=minilm,
        show_progress=False,
    )
    assert res.ingested == ["q_ssu_01"] and res.ranked == len(RETRIEVAL_SYSTEMS)
    rows = {r.system: r for r in read_predictions(out / "retrieval.jsonl", RetrievalRecord)}
    for system in ("hymem-summary", "hymem-segment", "dense-turn", "dense-session"):
        assert rows[system].metrics["session"]["recall_any@1"] == 1.0, system
    for system in ("hymem-segment", "dense-turn"):
        assert rows[system].metrics["turn"]["recall_any@5"] == 1.0, system
    # Credited honestly, a summary hit counts only the turns it quotes: the evidence turn is a
    # question ("I just adopted a golden retriever puppy, what food ...?") that the extractive
    # summariser does not turn into a fact, so its summaries point at the other answer turns.
    top = rows["hymem-summary"].turn_ids[:2]
    assert top and all(t.startswith("answer_ssu01_1_") for t in top)
    assert rows["dense-turn"].ranked_ids[0] == "answer_ssu01_1_1"
    summary = (out / "summary.json").read_text()
    assert "all-MiniLM-L6-v2" in summary
