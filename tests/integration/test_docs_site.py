"""Issue 49: the documentation site builds with `mkdocs build --strict`, offline, so a broken link,
a page missing from the nav, a bad anchor or an API name mkdocstrings cannot resolve fails the
suite. The build goes into a temporary folder; nothing is written into the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert "WARNING" not in ran.stderr, ran.stderr[-4000:]
    for page in sorted((ROOT / "docs").glob("*.md")):
        built = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert built.is_file(), f"{page.name} was not built"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "Long-term conversational memory under one folder" in api  # Memory's docstring


def test_the_site_needs_no_network() -> None:
    """Material's web fonts off, no plugin that fetches at build time."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "font: false" in config
    assert "fonts.googleapis" not in config and "cdn" not in config.lower()
