"""Issue #32 (5): the TypeScript client in `engine/client/typescript`, run by Node 20 against a
live `hymem serve` on 127.0.0.1: the Python client's calls, and hymem's errors as typed error
classes (skipped, with the reason, where `node` is absent)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fixtures_serve import Served
from tests.node import NODE, needs_node

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@needs_node
def test_the_typescript_client_against_a_live_server(rest_server: Served) -> None:
    assert NODE is not None
    run = subprocess.run(
        [NODE, str(ROOT / "tests" / "typescript" / "client_check.mjs"), rest_server.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["health"]["status"] == "ok"
    assert out["added"] == {"turns": 2, "newTurns": 2}
    assert out["flushed"] >= 1
    assert any("Porto" in h for h in out["hits"])
    assert "Porto" in out["answer"]["text"] and out["answer"]["evidence"] >= 1
    assert out["replay"] == {"then": True, "now": True}  # the past ask beside today's
    assert out["updated"] == "Ines lives in Lisbon now." and out["history"] == 2
    assert out["page"] >= 1
    assert out["notFound"]["cls"] == "NotFoundError" and out["notFound"]["status"] == 404
    assert out["notFound"]["userInput"] and out["notFound"]["hymem"]
    assert out["forbidden"]["cls"] == "AuthError" and out["forbidden"]["status"] == 403
    assert out["badArgument"]["cls"] == "UserInputError" and out["badArgument"]["status"] == 400
    assert out["badKey"]["cls"] == "AuthError" and out["badKey"]["status"] == 401
    assert out["emptyId"]["cls"] == "UserInputError" and out["emptyId"].get("status") is None
    assert out["unreachable"]["cls"] == "ServerUnavailable"
    assert out["erased"] == 2


SERVING = ROOT / "docs" / "serving.md"


def readme_block() -> str:
    text = SERVING.read_text(encoding="utf-8")
    start = text.index("**From TypeScript.**")
    return text[start:].split("```ts\n", 1)[1].split("```", 1)[0]


@needs_node
def test_the_readme_block_runs_as_written(rest_server: Served, tmp_path: Path) -> None:
    assert NODE is not None
    block = readme_block()
    assert len(block.strip().splitlines()) <= 10  # "in ten lines"
    client = (ROOT / "engine" / "client" / "typescript" / "index.js").as_uri()
    script = tmp_path / "readme.mjs"  # the block, with the package and server it names here
    script.write_text(
        block.replace('"@hymem/client"', json.dumps(client)).replace(
            "http://127.0.0.1:8765", rest_server.url
        ),
        encoding="utf-8",
    )
    run = subprocess.run(
        [NODE, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"HYMEM_KEY": "ka", "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert "Porto" in run.stdout
