"""Issue 49, item 15: a run with no model never reports "model" calls or tokens. The
extractive backend's work is counted (what it read and wrote, in tokens), and named as its own.
The reports' columns are checked in test_eval_report.py and test_lme_report.py."""

from __future__ import annotations

from hymem.cli.sleep_cmds import report_table
from hymem.evaluation.dashboard_data import Event
from hymem.evaluation.dashboard_tables import key_numbers_table
from hymem.sleep.consolidator import SleepReport
from rich.console import Console


def _text(table: object) -> str:
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


def test_sleep_on_the_extractive_backend_names_its_own_calls() -> None:
    report = SleepReport(dry_run=True, backend="extractive", asked=548, model_calls=3)
    out = _text(report_table(report))
    assert "asked the extractive backend" in out and "extractive calls" in out
    assert "extractive tokens" in out and "model" not in out.lower()
    out = _text(report_table(SleepReport(backend="openai:gpt-4.1-mini", asked=2)))
    assert "asked the model" in out and "model calls" in out and "model tokens" in out


def test_dashboard_key_numbers_say_whose_tokens() -> None:
    ext = [Event(source="run/hymem", path="light", escalated=False, tokens=2516, extractive=True)]
    html = key_numbers_table({"run/hymem": ext})
    assert "Extractive tokens / question" in html and "Model tokens" not in html
    llm = [Event(source="t", path="light", escalated=False, tokens=10)]
    assert "Model tokens / question" in key_numbers_table({"t": llm})
