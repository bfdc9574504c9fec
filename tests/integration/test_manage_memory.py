"""Managing a real memory (LanceDB + Tantivy, the real MiniLM, the extractive backend): list,
get, update, delete, export and import round trip, and the CLI over all of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hymem import Memory, MemoryConfig
from hymem.cli import app
from hymem.core.errors import NotFoundError, UserInputError
from hymem.core.types import SummaryStatus
from typer.testing import CliRunner

pytestmark = pytest.mark.integration

SESSIONS = [
    ("I adopted a beagle named Biscuit last week", "Lovely, beagles are friendly"),
    ("My sister Maria lives in Porto", "Porto is beautiful"),
    ("I am training for the Lisbon half marathon", "Good luck with the training"),
]


def _open(folder: Path, minilm: Any) -> Memory:
    return Memory(folder, config=MemoryConfig.defaults(llm="extractive"), embedder=minilm)


@pytest.fixture
def source(tmp_path: Path, minilm: Any) -> Path:
    folder = tmp_path / "src"
    with _open(folder, minilm) as mem:
        for i, (said, reply) in enumerate(SESSIONS):
            turns = [{"speaker": "Ann", "text": said}, {"speaker": "Bo", "text": reply}]
            mem.add(turns, user_id="ann", session_id=f"s{i}", timestamp=f"2023-05-0{i + 1}T10:00")
        mem.flush(user_id="ann")
        mem.add([{"speaker": "Ann", "text": "I also sing in a choir"}], user_id="ann")  # pending
        mem.add({"role": "user", "content": "my password hint is a beagle"}, user_id="zed")
        by_text = {r.text: r.id for r in mem.get_all(user_id="ann").items}
        beagle = next(i for t, i in by_text.items() if "Biscuit" in t)
        porto = next(i for t, i in by_text.items() if "Porto" in t)
        mem.update(beagle, "Ann's beagle is called Biscuit and is two years old", user_id="ann")
        mem.delete(porto, user_id="ann")
    return folder


def _dump(mem: Memory, user: str) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for level in ("turn", "segment", "summary"):
        page = mem.get_all(user_id=user, level=level, status="all", limit=1000)  # type: ignore[arg-type]
        out[level] = [r.model_dump(exclude={"vector", "user_id"}) for r in page.items]
    return out


def test_export_and_import_round_trip_every_record_and_link(
    source: Path, tmp_path: Path, minilm: Any
) -> None:
    out = tmp_path / "ann.jsonl"
    with _open(source, minilm) as mem:
        report = mem.export(out, user_id="ann")
        before = _dump(mem, "ann")
    assert (report.turns, report.summaries) == (7, len(before["summary"]))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["kind"] == "header" and lines[-1] == {
        "kind": "end",
        "counts": {"turn": 7, "segment": report.segments, "summary": report.summaries},
    }
    assert "zed" not in out.read_text()
    with _open(tmp_path / "dst", minilm) as other:
        imported = other.import_records(out)
        assert imported.turns == 7 and imported.summaries == report.summaries
        assert _dump(other, "ann") == before
        hits = other.search("how old is the dog?", user_id="ann", k=1)
        assert "two years old" in hits[0].text
        statuses = {r.status for r in other.get_all(user_id="ann", status="all").items}
        assert statuses == {SummaryStatus.ACTIVE, SummaryStatus.SUPERSEDED, SummaryStatus.DELETED}
        assert other.pending(user_id="ann")[0].text == "I also sing in a choir"
        again = other.import_records(out)  # idempotent: nothing new, nothing doubled
        assert again.turns == 0 and _dump(other, "ann") == before
        other.import_records(out, user_id="ann-copy")
        assert _dump(other, "ann-copy") == before


def test_a_bad_export_is_refused_with_the_line_and_nothing_written(
    source: Path, tmp_path: Path, minilm: Any
) -> None:
    out = tmp_path / "ann.jsonl"
    with _open(source, minilm) as mem:
        mem.export(out, user_id="ann")
    lines = out.read_text().splitlines()
    cases = {
        "truncated": lines[:-1],
        "line 3": [*lines[:2], "{not json", *lines[2:]],
        "another user": [
            lines[0],
            lines[1].replace('"user_id": "ann"', '"user_id": "zed"'),
            *lines[2:],
        ],
        "not a hymem export": lines[1:],
        "invalid turn": [lines[0], lines[1].replace('"seq": 0', '"seq": "zero"'), *lines[2:]],
    }
    with _open(tmp_path / "dst", minilm) as other:
        for needle, body in cases.items():
            bad = tmp_path / "bad.jsonl"
            bad.write_text("\n".join(body) + "\n")
            with pytest.raises(UserInputError, match=needle):
                other.import_records(bad)
            assert other.stats()["turns"] == 0
        other.add({"role": "user", "content": "hello"}, user_id="ann")
        with pytest.raises(UserInputError, match="already holds other turns"):
            other.import_records(out)
        with pytest.raises(UserInputError, match="cannot read"):
            other.import_records(tmp_path / "missing.jsonl")


def test_ids_are_scoped_by_user(source: Path, minilm: Any) -> None:
    with _open(source, minilm) as mem:
        ann = mem.get_all(user_id="ann").items[0].id
        with pytest.raises(NotFoundError):
            mem.get(ann, user_id="zed")
        with pytest.raises(NotFoundError):
            mem.update(ann, "hijacked", user_id="zed")
        with pytest.raises(NotFoundError):
            mem.delete(ann, user_id="zed")
        with pytest.raises(NotFoundError):
            mem.history(ann, user_id="zed")
        with pytest.raises(UserInputError):
            mem.update(ann, "   ", user_id="ann")
        assert mem.get(ann, user_id="ann").summary.status is SummaryStatus.ACTIVE


def _last_json(output: str) -> dict[str, Any]:
    """The last JSON line (model loading may print a progress bar on the same stream)."""
    line = [line for line in output.splitlines() if "{" in line][-1]
    return json.loads(line[line.index("{") :])


def test_the_cli_lists_gets_corrects_exports_imports_and_erases(
    source: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    s = ["-s", str(source)]
    res = runner.invoke(app, ["list", "-u", "ann", *s, "--json", "--limit", "1", "--all"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in res.output.splitlines() if x.startswith("{")]
    assert len(rows) >= 2 and all(r["status"] == "active" for r in rows)
    res = runner.invoke(app, ["list", "-u", "ann", *s, "--level", "turn", "--limit", "2"])
    assert res.exit_code == 0 and "next page: --cursor" in res.output
    first = rows[0]["id"]
    res = runner.invoke(app, ["get", first, "-u", "ann", *s, "--json"])
    assert res.exit_code == 0 and _last_json(res.output)["summary"]["id"] == first
    res = runner.invoke(app, ["update", first, "Ann corrected this", "-u", "ann", *s])
    assert res.exit_code == 0 and "version 2" in res.output
    res = runner.invoke(app, ["get", first, "-u", "zed", *s])
    assert res.exit_code != 0 and isinstance(res.exception, NotFoundError)
    out = tmp_path / "ann.jsonl"
    res = runner.invoke(app, ["export", "-u", "ann", "-o", str(out), *s])
    assert res.exit_code == 0 and _last_json(res.output)["turns"] == 7
    dst = ["-s", str(tmp_path / "dst")]
    res = runner.invoke(app, ["import", str(out), "-u", "ann2", *dst])
    assert res.exit_code == 0 and _last_json(res.output)["user_id"] == "ann2"
    res = runner.invoke(app, ["erase", "-u", "ann", *s], input="n\n")
    assert res.exit_code != 0  # declined: nothing erased
    res = runner.invoke(app, ["erase", "-u", "ann", *s, "--yes"])
    assert res.exit_code == 0 and _last_json(res.output)["turns"] == 7
    res = runner.invoke(app, ["list", "-u", "ann", *s])
    assert res.exit_code == 0 and "nothing to list" in res.output
