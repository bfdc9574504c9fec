"""The fenced code blocks of the README and of docs/*.md, for the tests that run them as written.

A block may be preceded (on the line just above its opening fence) by one marker, an HTML
comment that the rendered page does not show:

    <!-- doc-test: skip: REASON -->        not run; the reason says why and what tests it instead
    <!-- doc-test: by tests/PATH.py -->     run by that test, which asserts what the block prints
    <!-- doc-test: server -->              run with URL and KEY naming a live `hymem serve`

tests/integration/test_doc_blocks.py runs every unmarked Python block, each alone in a fresh
folder, and checks the blocks of the other languages (see there); it also holds the complete
list of marked blocks, so a new exclusion is a reviewed change of that test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- doc-test: (?P<kind>skip|by|server)(?::? (?P<arg>.*?))? -->$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its marker (if any)."""

    page: Path
    line: int  # 1-based line of the opening fence
    heading: str  # the nearest heading above it, as written ("## Tracing")
    lang: str
    code: str
    marker: str | None = None  # "skip", "by" or "server"
    marker_arg: str = ""
    sections: tuple[str, ...] = ()  # every heading it lies under, outermost first

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README and every docs page, in a stable order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def parse(page: Path) -> list[Block]:
    """Every fenced block of `page` (a `#` line inside a block is code, not a heading)."""
    found: list[Block] = []
    heading, fence, start, current = "", None, 0, []
    stack: list[str] = []
    marker: tuple[str, str] | None = None
    previous = ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if fence is None and line.startswith("```"):
            fence, start, current = line[3:].strip(), number, []
            m = MARKER.match(previous.strip())
            marker = (m["kind"], m["arg"] or "") if m else None
        elif fence is not None and line.startswith("```"):
            kind, arg = marker if marker else (None, "")
            code = "\n".join(current) + "\n"
            found.append(Block(page, start, heading, fence, code, kind, arg, tuple(stack)))
            fence = None
        elif fence is not None:
            current.append(line)
        elif line.startswith("#"):
            heading, level = line, len(line) - len(line.lstrip("#"))
            stack = [h for h in stack if len(h) - len(h.lstrip("#")) < level] + [line]
        previous = line
    return found


def blocks(heading: str, lang: str = "python", page: Path = README) -> list[str]:
    """The ```lang blocks of `page` under `heading` (a whole heading line, e.g. "## Tracing"),
    up to the next heading of the same or a higher level."""
    return [b.code for b in parse(page) if heading in b.sections and b.lang == lang]


__all__ = ["DOCS", "README", "ROOT", "Block", "blocks", "pages", "parse"]
