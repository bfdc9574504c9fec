"""The dashboard opened in headless Chromium: every chart with data renders with marks in it
(plotly drew its SVG and at least one bar, point, line or box), every other chart is listed as
not drawn with its reason, and the key numbers computed from the fixture traces and runs appear
on the page. Real extractive LoCoMo and LongMemEval runs (issue 28's empty charts) too, and
screenshots of a whole LoCoMo page with its store (issue 49: what a reader trips over)."""

from __future__ import annotations

import importlib.util
import re
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hymem.core.config import MemoryConfig
from hymem.embed.embedders import HashingEmbedder
from hymem.evaluation.dashboard import CHART_IDS, load_store, write_dashboard
from hymem.evaluation.longmemeval.runner import LmeOptions, run_longmemeval
from hymem.evaluation.runner import RunOptions, run_locomo
from hymem.evaluation.systems import ALL_SYSTEMS

from tests.fixtures_eval import EVAL_MINI, fixture_traces, make_run_dir
from tests.fixtures_lme import LME_MINI

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


# Classes plotly gives what it draws: a bar (`g.point`), a marker (`path.point`), a line
# (`path.js-line`), a box (`path.box`). A chart with none of them is an empty frame.
MARK_CLASSES = frozenset({"point", "js-line", "box"})


class ChartScan(HTMLParser):
    """Reads the rendered DOM: which charts plotly drew (a `.main-svg` inside the chart div) and
    how many marks each holds, the charts the page lists as not drawn, the key-number cells by
    id, and the report tables."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.svgs: dict[str, int] = {}
        self.marks: dict[str, int] = {}
        self.absent: set[str] = set()
        self.cells: dict[str, dict[str, str]] = {}
        self._cell: str | None = None
        self.text: dict[str, str] = {}
        self.ids: set[str] = set()
        self.report_tables: dict[str, int] = {}
        self.headings: list[str] = []
        self._heading = False
        self.groups: list[set[str]] = []  # the classes of each open SVG <g>
        self.rotated: dict[str, int] = {}  # x tick labels drawn at an angle, per chart
        self.titled: set[str] = set()  # charts with a plotly title (the mode bar covers it)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag == "div":
            self.stack.append(a.get("id") if a.get("id") in CHART_IDS else None)
        chart = next((c for c in reversed(self.stack) if c), None)
        if chart and tag == "svg" and "main-svg" in classes:
            self.svgs[chart] = self.svgs.get(chart, 0) + 1
        if chart and classes & MARK_CLASSES:
            self.marks[chart] = self.marks.get(chart, 0) + 1
        if tag == "g":
            self.groups.append(classes)
        if chart and tag == "text":
            if (
                self.groups
                and "xtick" in self.groups[-1]
                and "rotate(" in (a.get("transform") or "")
            ):
                self.rotated[chart] = self.rotated.get(chart, 0) + 1
            if "gtitle" in classes:
                self.titled.add(chart)
        if tag == "li" and a.get("data-charts"):
            self.absent.update((a["data-charts"] or "").split())
        if tag == "table" and "report-table" in classes:
            run = a.get("data-run") or ""
            self.report_tables[run] = self.report_tables.get(run, 0) + 1
        if tag in ("h4", "h5"):
            self._heading = True
            self.headings.append("")
        if tag == "td" and (a.get("id") or "").startswith("kn-"):
            self.cells[a["id"]] = {k: v or "" for k, v in a.items()}
            self._cell = a["id"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.stack:
            self.stack.pop()
        if tag == "g" and self.groups:
            self.groups.pop()
        if tag == "td":
            self._cell = None
        if tag in ("h4", "h5"):
            self._heading = False

    def handle_data(self, data: str) -> None:
        if self._cell:
            self.text[self._cell] = self.text.get(self._cell, "") + data
        if self._heading:
            self.headings[-1] += data

    @property
    def drawn(self) -> set[str]:
        return {c for c, n in self.svgs.items() if n}


def render(chromium: str, page: Path, profile: Path) -> ChartScan:
    dom = subprocess.run(
        [*chromium_args(chromium, profile), "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    scan = ChartScan()
    scan.feed(dom)
    return scan


def assert_no_empty_chart(scan: ChartScan) -> None:
    """Every chart is either drawn with at least one mark or listed as not drawn, never both."""
    for chart in CHART_IDS:
        assert (chart in scan.drawn) != (chart in scan.absent), chart
        if chart in scan.drawn:
            assert scan.marks.get(chart, 0) >= 1, f"{chart} is drawn empty"


def test_dashboard_renders_charts_and_numbers(tmp_path: Path, chromium: str) -> None:
    runs = [make_run_dir(tmp_path, "run-a"), make_run_dir(tmp_path, "run-b")]
    page = write_dashboard(tmp_path / "dash.html", traces=fixture_traces(), runs=runs)
    html_text = page.read_text()
    # Self-contained: plotly.js is inlined and nothing is fetched when the page is viewed.
    assert re.search(r"<script[^>]*\bsrc=", html_text) is None
    assert len(html_text) > 1_000_000

    scan = render(chromium, page, tmp_path / "profile")
    assert_no_empty_chart(scan)
    # The fixture runs scored no retrieval: that chart is absent and the page says so.
    assert scan.drawn == set(CHART_IDS) - {"chart-retrieval"}
    assert scan.absent == {"chart-retrieval"}

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


@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One extractive LoCoMo run of every system (with its store), shared by this module."""
    return _locomo_run(tmp_path_factory.mktemp("runs"))


def _locomo_run(root: Path) -> Path:
    out = root / "locomo"
    run_locomo(
        RunOptions(dataset=EVAL_MINI, out=out, systems=list(ALL_SYSTEMS), workers=2),
        MemoryConfig.defaults(embedder="hashing"),
        embedder=HashingEmbedder(256),
        show_progress=False,
    )
    return out


def _lme_run(root: Path) -> Path:
    out = root / "lme"
    run_longmemeval(
        LmeOptions(dataset=LME_MINI, out=out),
        MemoryConfig.defaults(embedder="hashing"),
        embedder=HashingEmbedder(256),
        show_progress=False,
    )
    return out


def test_extractive_locomo_run_draws_every_chart_with_data(
    tmp_path: Path, chromium: str, locomo_run: Path
) -> None:
    run = locomo_run
    scan = render(chromium, run / "dashboard.html", tmp_path / "profile")
    assert_no_empty_chart(scan)
    assert scan.drawn == set(CHART_IDS)  # recall@k included: LoCoMo's rows are drawn
    assert scan.marks["chart-retrieval"] >= 9  # 3 levels x 3 modes, at k = 5 and 10
    # The report's retrieval and matched-budget tables are on the page.
    assert scan.report_tables["locomo"] >= 3
    assert any(h.startswith("Retrieval only: evidence recall@k") for h in scan.headings)
    assert any(h.startswith("Retrieval at hymem's cost") for h in scan.headings)
    assert "key-numbers" in scan.ids


def test_extractive_longmemeval_run_shows_only_what_has_data(tmp_path: Path, chromium: str) -> None:
    run = _lme_run(tmp_path)
    scan = render(chromium, run / "dashboard.html", tmp_path / "profile")
    assert_no_empty_chart(scan)
    # No answers without a model: only retrieval is drawn, the rest is listed with why.
    assert scan.drawn == {"chart-retrieval"}
    assert scan.absent == set(CHART_IDS) - {"chart-retrieval"}
    page = (run / "dashboard.html").read_text(encoding="utf-8")
    assert "LongMemEval QA needs a model" in page
    # No empty key-numbers table: a note in its place, and the report's tables below.
    assert "key-numbers" not in scan.ids and "no-key-numbers" in scan.ids
    assert scan.report_tables["lme"] >= 3
    assert any(h.startswith("Retrieval, session level") for h in scan.headings)
    assert any(h.startswith("Retrieval at hymem's cost") for h in scan.headings)


def screenshot(chromium: str, page: Path, shot: Path, width: int, height: int) -> None:
    subprocess.run(
        [
            *chromium_args(chromium, shot.with_suffix(".profile")),
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )


def assert_real_picture(shot: Path, width: int, height: int) -> None:
    """A PNG of the window's size that is a picture, not one flat colour (a blank or failed
    render): with Pillow, many distinct colours; without it, a file far larger than a flat one."""
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (width, height)
    if importlib.util.find_spec("PIL") is None:
        assert len(data) > 100_000, len(data)
        return
    from PIL import Image

    with Image.open(shot) as img:
        rgb = img.convert("RGB")
        assert rgb.getcolors(maxcolors=256) is None  # over 256 colours: text, charts, tables
        top, bottom = (
            rgb.crop((0, 0, width, height // 2)),
            rgb.crop((0, height // 2, width, height)),
        )
        assert all(
            len(part.getcolors(maxcolors=width * height) or []) > 20 for part in (top, bottom)
        )


def test_dashboard_screenshots(tmp_path: Path, chromium: str, locomo_run: Path) -> None:
    """The page as a reader opens it from `hymem dashboard --runs RUN --traces RUN/store`,
    screenshotted (kept under tmp_path): what is above the fold, and the whole page. In the
    rendered charts no x tick label is drawn at an angle and no chart title is plotly's (the
    mode bar covered those); each chart's title is the heading above it."""
    traces, health = load_store(locomo_run / "store")
    page = write_dashboard(
        tmp_path / "dashboard.html",
        traces=traces,
        runs=[locomo_run],
        health=health,
        store=str(locomo_run / "store"),
    )
    scan = render(chromium, page, tmp_path / "profile")
    assert scan.drawn == set(CHART_IDS)
    assert scan.rotated == {}, scan.rotated
    assert scan.titled == set(), scan.titled
    text = page.read_text(encoding="utf-8")
    assert text.index("id='glossary'") < text.index('id="chart-')
    panels = ("id='memory-health'", "id='recent-asks'", 'class="run-retrieval"')
    assert [text.index(p) for p in panels] == sorted(text.index(p) for p in panels)

    for name, (width, height) in {"top": (1400, 1000), "full": (1400, 5200)}.items():
        shot = tmp_path / f"dashboard-{name}.png"
        screenshot(chromium, page, shot, width, height)
        assert_real_picture(shot, width, height)
