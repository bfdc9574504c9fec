"""Library code speaks of the product: its docstrings and comments give the reason itself, never
a pointer into the project's own history (an issue number, the benchmark results file, a
benchmark script), which a user reading the installed package cannot follow."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# "#47" only after a space or a parenthesis: CSS colours ("color:#222") are no citation.
CITATION = re.compile(r"\bissue #?\d+|(?:^|[\s(])#\d{2,}\b|RESULTS\.md|benchmarks/", re.IGNORECASE)


def test_library_code_cites_no_issue_results_file_or_benchmark_script() -> None:
    found = []
    for folder in ("engine", "indexes", "prompts"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".md") or "__pycache__" in path.parts:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if CITATION.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == [], "say the reason itself:\n" + "\n".join(found)


def test_the_pattern_sees_each_kind_of_citation() -> None:
    cited = ["(issue 30)", "issue #27", "(#47)", "benchmarks/RESULTS.md", "`benchmarks/erase.py`"]
    plain = ["an issue with the reply", "color:#222", "&#39;", "k = 60", "LoCoMo's results"]
    assert all(CITATION.search(text) for text in cited)
    assert not any(CITATION.search(text) for text in plain)
