"""The code blocks of one README section, for the tests that run them as written."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def blocks(heading: str, lang: str = "python") -> list[str]:
    """The ```lang blocks between `heading` (a whole heading line, e.g. "### LangGraph") and
    the next heading of the same or a higher level (a `#` line inside a block is code)."""
    level = len(heading.split(" ", 1)[0])
    found: list[str] = []
    inside, fence, current = False, None, []
    for line in README.read_text(encoding="utf-8").splitlines():
        if fence is None and line.startswith("#"):
            marks = len(line) - len(line.lstrip("#"))
            if inside and marks <= level and line[marks : marks + 1] == " ":
                break
            inside = inside or line == heading
            continue
        if line.startswith("```"):
            if fence is None:
                fence, current = line[3:].strip(), []
            else:
                if inside and fence == lang:
                    found.append("\n".join(current) + "\n")
                fence = None
            continue
        if fence is not None:
            current.append(line)
    return found


__all__ = ["README", "blocks"]
