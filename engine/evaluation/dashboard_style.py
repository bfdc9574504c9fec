"""How the dashboard tells its series apart, decided once per page so that every chart agrees:
one colour per answer source (the same system is the same colour in every chart, not whatever
plotly's colour cycle gives the n-th trace of each figure), a line dash and marker per source
(two series with the same values must not hide each other), short labels (the run's name is
dropped when the page shows one run, so tick labels fit unrotated), and the series that repeat
an earlier one's values, so their legend can say so."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Okabe and Ito's colour-blind-safe set (black and yellow left out: black reads as an axis and
# yellow vanishes on white), then plotly's default cycle for pages with more sources.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#D55E00",  # vermilion
    "#56B4E9",  # sky blue
    "#8C564B",
    "#7F7F7F",
    "#BCBD22",
    "#17BECF",
    "#9467BD",
    "#1F77B4",
)
# Retrieval modes are not answer sources: shades of grey, so they never look like a system.
MODE_COLOURS: dict[str, str] = {"dense": "#3B3B3B", "hybrid": "#7A7A7A", "lexical": "#B8B8B8"}
# Drawn in this order: a later series over an earlier identical one leaves it showing through
# the gaps of its dash, and a different marker shape sits on the same point.
DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS: tuple[str, ...] = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross")
TICK_LINE = 14  # longest tick-label line (characters) that fits a 620px chart unrotated


@dataclass(frozen=True)
class SeriesStyle:
    """The look of one answer source, the same in every chart."""

    colour: str
    dash: str
    symbol: str
    label: str


def _run_of(key: str) -> str | None:
    return key.split("/", 1)[0] if "/" in key else None


def short_labels(keys: Sequence[str]) -> dict[str, str]:
    """Each source's label: "<system>" when every run source comes from one run (its name is
    then said once, above the charts), else the full "<run>/<system>"."""
    runs = {_run_of(k) for k in keys} - {None}
    if len(runs) != 1:
        return {k: k for k in keys}
    labels = {k: k.split("/", 1)[1] if "/" in k else k for k in keys}
    # A store's traces and a run system of the same name would become one label.
    if len(set(labels.values())) < len(labels):
        return {k: k for k in keys}
    return labels


class Styles:
    """The page's series styles, keyed by source ("traces", "<run>/<system>"), built once."""

    def __init__(self, keys: Iterable[str]) -> None:
        order = list(dict.fromkeys(keys))
        labels = short_labels(order)
        self._styles = {
            k: SeriesStyle(
                colour=PALETTE[i % len(PALETTE)],
                dash=DASHES[i % len(DASHES)],
                symbol=SYMBOLS[i % len(SYMBOLS)],
                label=labels[k],
            )
            for i, k in enumerate(order)
        }

    def __getitem__(self, key: str) -> SeriesStyle:
        if key not in self._styles:  # a source `series_keys` did not list: the next style
            i = len(self._styles)
            self._styles[key] = SeriesStyle(
                PALETTE[i % len(PALETTE)], DASHES[i % len(DASHES)], SYMBOLS[i % len(SYMBOLS)], key
            )
        return self._styles[key]

    def label(self, key: str) -> str:
        return self[key].label

    def colour(self, key: str) -> str:
        return self[key].colour

    @property
    def keys(self) -> list[str]:
        return list(self._styles)


def series_keys(sources: Iterable[str], runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Every source a chart may draw, in page order: the answer sources, then each run's systems
    that only its summary names (a LongMemEval run's retrieval-only systems)."""
    keys = list(sources)
    for name, summary in runs:
        systems = [
            *(summary.get("systems") or {}),
            *(summary.get("qa") or {}),
            *((summary.get("retrieval") or {}).get("systems") or []),
        ]
        keys += [f"{name}/{s}" for s in systems if isinstance(s, str)]
    return list(dict.fromkeys(keys))


def same_as(series: Mapping[str, tuple[Sequence[Any], Sequence[Any]]]) -> dict[str, str]:
    """{name: the first earlier series with exactly the same (x, y) points}: in a line chart
    the later one would be drawn over it and hide it, so its legend names the twin."""
    seen: dict[tuple[tuple[Any, ...], tuple[Any, ...]], str] = {}
    out: dict[str, str] = {}
    for name, (xs, ys) in series.items():
        points = (tuple(xs), tuple(ys))
        if points in seen:
            out[name] = seen[points]
        else:
            seen[points] = name
    return out


def wrap_label(text: str, width: int = TICK_LINE) -> str:
    """A category label broken into lines of at most `width` characters at its separators
    ("single-session-preference" -> "single-session-<br>preference"), so it fits unrotated."""
    parts = re.findall(r"[^-_/ ]+[-_/ ]?", text) or [text]
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(part.rstrip()) <= width:
            lines[-1] += part
        else:
            lines.append(part)
    return "<br>".join(line.rstrip(" ") for line in lines)


__all__ = [
    "DASHES",
    "MODE_COLOURS",
    "PALETTE",
    "SYMBOLS",
    "TICK_LINE",
    "SeriesStyle",
    "Styles",
    "same_as",
    "series_keys",
    "short_labels",
    "wrap_label",
]
