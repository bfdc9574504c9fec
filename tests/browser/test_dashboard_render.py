"""The dashboard opened in headless Chromium: every chart renders (plotly drew its SVG) and
the key numbers computed from the fixture traces and run appear on the page."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hymem.evaluation.dashboard import CHART_IDS, write_dashboard

from tests.fixtures_eval import fixture_traces, make_run_dir

pytestmark = pytest.mark.browser


def chromium_args(chromium: str, profile: Path) -> list[str]:
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
    ]


class ChartScan(HTMLParser):
    """Counts plotly's `.main-svg` elements inside each chart div and collects the key-number
    cells by id."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.svgs: dict[str, int] = {}
        self.cells: dict[str, dict[str, str]] = {}
        self._cell: str | None = None
        self.text: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div":
            self.stack.append(a.get("id") if a.get("id") in CHART_IDS else None)
        if tag == "svg" and "main-svg" in (a.get("class") or "").split():
            for chart in self.stack:
                if chart:
                    self.svgs[chart] = self.svgs.get(chart, 0) + 1
        if tag == "td" and (a.get("id") or "").startswith("kn-"):
            self.cells[a["id"]] = {k: v or "" for k, v in a.items()}
            self._cell = a["id"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.stack:
            self.stack.pop()
        if tag == "td":
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell:
            self.text[self._cell] = self.text.get(self._cell, "") + data


def test_dashboard_renders_charts_and_numbers(tmp_path: Path, chromium: str) -> None:
    runs = [make_run_dir(tmp_path, "run-a"), make_run_dir(tmp_path, "run-b")]
    page = write_dashboard(tmp_path / "dash.html", traces=fixture_traces(), runs=runs)
    html_text = page.read_text()
    # Self-contained: plotly.js is inlined and nothing is fetched when the page is viewed.
    assert re.search(r"<script[^>]*\bsrc=", html_text) is None
    assert len(html_text) > 1_000_000

    dom = subprocess.run(
        [*chromium_args(chromium, tmp_path / "profile"), "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    scan = ChartScan()
    scan.feed(dom)
    for chart in CHART_IDS:
        assert scan.svgs.get(chart, 0) >= 1, f"{chart} did not render"

    def cell(source: str, metric: str) -> tuple[str, str]:
        c = scan.cells[f"kn-{source}-{metric}"]
        return c["data-value"], scan.text[f"kn-{source}-{metric}"].strip()

    assert cell("traces", "escalation-rate") == ("0.5", "50.0%")
    assert cell("traces", "questions") == ("6.0", "6")
    assert cell("traces", "latency-p50-ms") == ("107.5", "107.5")  # (35 + 180) / 2
    assert cell("run-a-hymem", "escalation-rate") == ("0.25", "25.0%")
    assert cell("run-a-hymem", "light-f1") == ("1.0", "100.0%")
    assert cell("run-a-hymem", "deep-f1") == ("0.5", "50.0%")
    assert cell("run-a-full-context", "escalation-rate") == ("", "–")
    assert cell("run-a-full-context", "mean-f1") == ("0.5", "50.0%")
    assert cell("run-b-hymem", "escalation-rate") == ("0.25", "25.0%")  # runs side by side
    # The per-round chart carries the fixture's numbers: round 1 3/6 escalated, round 2 0/2.
    assert '"y":[0.5,0.0]' in html_text.replace(" ", "")

    shot = tmp_path / "dashboard.png"  # kept in tmp only
    subprocess.run(
        [
            *chromium_args(chromium, tmp_path / "profile2"),
            "--window-size=1400,2400",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.exists() and shot.stat().st_size > 20_000
