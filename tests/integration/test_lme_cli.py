"""`hymem eval longmemeval` from the command line: options, clear errors (one line, exit 2 for
a file that is not the format), and a run killed mid-way finished by rerunning it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import Result
from hymem.cli import app
from hymem.core.config import MemoryConfig
from hymem.core.errors import ConfigError, UserInputError
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.longmemeval.records import RetrievalRecord
from hymem.evaluation.longmemeval.runner import LmeOptions, run_longmemeval
from hymem.evaluation.longmemeval.systems import RETRIEVAL_SYSTEMS
from hymem.evaluation.predictions import read_predictions
from typer.testing import CliRunner

from tests.fixtures_lme import LME_MINI, LME_SCORED

pytestmark = pytest.mark.integration


def invoke(*args: str) -> Result:
    return CliRunner().invoke(
        app, ["eval", "longmemeval", *args, "--embedder", "hashing", "--llm", "extractive"]
    )


def test_cli_selects_questions_types_and_systems(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = invoke(
        str(LME_MINI),
        "--questions",
        "q_ssu_01,q_tr_04",
        "--systems",
        "hymem-summary,bm25-session",
        "--out",
        str(out),
    )
    assert res.exit_code == 0, (res.output, res.exception)
    assert "# LongMemEval evaluation — extractive (no LLM)" in res.output
    keys = {r.key for r in read_predictions(out / "retrieval.jsonl", RetrievalRecord)}
    assert keys == {
        (q, s) for q in ("q_ssu_01", "q_tr_04") for s in ("hymem-summary", "bm25-session")
    }
    res = invoke(
        str(LME_MINI),
        "--types",
        "knowledge-update",
        "--types",
        "multi-session",
        "--limit",
        "1",
        "--systems",
        "dense-turn",
        "--out",
        str(tmp_path / "r2"),
    )
    assert res.exit_code == 0, (res.output, res.exception)
    rows = read_predictions(tmp_path / "r2" / "retrieval.jsonl", RetrievalRecord)
    assert [r.key for r in rows] == [("q_ms_02", "dense-turn")]


@pytest.mark.parametrize(
    ("args", "error", "text"),
    [
        (["--systems", "hymem-summary,bogus"], UserInputError, "bogus"),
        (["--questions", "q_nope"], UserInputError, "q_nope"),
        (["--types", "poetry"], UserInputError, "poetry"),
        (["--judge", "extractive"], ConfigError, "needs a model"),
    ],
)
def test_cli_bad_options_are_clear_errors(
    tmp_path: Path, args: list[str], error: type[Exception], text: str
) -> None:
    res = invoke(str(LME_MINI), *args, "--out", str(tmp_path / "r"))
    assert isinstance(res.exception, error) and text in str(res.exception)


def _cli(*args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hymem.cli",
        "eval",
        "longmemeval",
        *args,
        "--embedder",
        "hashing",
        "--llm",
        "extractive",
    ]


def test_a_file_that_is_not_the_format_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text("these are my notes, not LongMemEval")
    proc = subprocess.run(
        _cli(str(bad), "--out", str(tmp_path / "r")), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hymem: error: ")
    assert "notes.json is not LongMemEval JSON" in lines[0]


@pytest.mark.slow
def test_killed_run_is_finished_by_rerunning_without_reingesting(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        _cli(str(LME_MINI), "--out", str(out)),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not (out / "ingest" / "q_ssu_01.json").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL, "the run finished before it could be killed"
    done = sorted(p.stem for p in (out / "ingest").glob("*.json"))
    assert "q_ssu_01" in done and len(done) < len(LME_SCORED)
    res = run_longmemeval(
        LmeOptions(dataset=LME_MINI, out=out, dashboard=False),
        MemoryConfig.defaults(embedder="hashing"),
        embedder=HashingEmbedder(256),
        show_progress=False,
    )
    assert not set(done) & set(res.ingested)
    assert sorted(done + res.ingested) == sorted(LME_SCORED)
    rows = read_predictions(out / "retrieval.jsonl", RetrievalRecord)
    assert len(rows) == len(LME_SCORED) * len(RETRIEVAL_SYSTEMS)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["retrieval"]["questions"] == len(LME_SCORED)
