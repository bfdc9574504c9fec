"""`import hymem` has no side effects on the process: it sets no environment variable and loads
none of the heavy libraries a call may need later (the embedder's torch stack, threadpoolctl,
scikit-learn, the LanceDB client, the model clients). Run in a fresh interpreter with a bare
environment, so nothing this test process imported or set hides a change."""

from __future__ import annotations

import json
import subprocess
import sys

# Imported only by the call that uses them, never by `import hymem`.
HEAVY = (
    "fastapi",
    "lancedb",
    "llama_cpp",
    "llmlingua",
    "openai",
    "scipy",
    "sentence_transformers",
    "sklearn",
    "threadpoolctl",
    "torch",
    "transformers",
)

_SCRIPT = f"""
import json, os, sys
before = dict(os.environ)
import hymem
after = dict(os.environ)
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
print(json.dumps({{"changed": changed, "loaded": loaded}}))
"""


def _import_hymem() -> dict[str, list[str]]:
    res = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=120,
        check=True,
    )
    result: dict[str, list[str]] = json.loads(res.stdout)
    return result


def test_import_leaves_the_environment_and_heavy_libraries_alone() -> None:
    result = _import_hymem()
    assert result["changed"] == [], "import hymem changed os.environ"
    assert result["loaded"] == [], "import hymem imported heavy libraries"
