"""The TypeScript client's add() takes `request_id` as the Python client does: the same request
sent again is stored once, and the same words without one are stored again; run by Node 20
against a live server on 127.0.0.1 (skipped, with the reason, where `node` is absent)."""

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
def test_the_typescript_client_names_its_add(rest_server: Served) -> None:
    assert NODE is not None
    run = subprocess.run(
        [NODE, str(ROOT / "tests" / "typescript" / "request_id_check.mjs"), rest_server.url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out == {"sameIds": True, "againNew": 0, "repeatNew": 2}
